"""The affine/box fast paths must agree bit for bit with plain per-thread execution."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simt_helpers import tu_of

from cuda2nki.simt import run_kernel_full

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.tobytes() == y.tobytes(), k


GUARDS = """
__global__ void k(int* out, int n, int s) {
    int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
    int t = threadIdx.x, y = threadIdx.y;
    if (i >= n) return;
    out[i] = 0;
    if (t < s) out[i] += 1;
    if (t <= s) out[i] += 2;
    if (t > s) out[i] += 4;
    if (t >= s) out[i] += 8;
    if (t == s) out[i] += 16;
    if (31 - t < s) out[i] += 32;
    if (2 * y - 3 > s - 4) out[i] += 64;
    if (blockIdx.x == 1) out[i] += 128;
    if (s - t * 3 >= 2) { out[i] += 256; if (y < 1) return; }
    out[i] += 512;
}
"""


@pytest.mark.parametrize("s", [-3, 0, 1, 5, 7, 31, 40])
def test_single_axis_guards_match_plain_execution(s: int) -> None:
    tu = tu_of(GUARDS)
    n = 7 * 32 * 2 - 5
    res = []
    for fast in (True, False):
        r = run_kernel_full(
            tu,
            "k",
            grid=(7,),
            block=(32, 2),
            fast=fast,
            chunk_threads=128,
            args={"out": np.full(n, -1, np.int32), "n": n, "s": s},
        )
        res.append(r.outputs)
    _same(*res)
    out = res[0]["out"]
    i = np.arange(n)
    b, rem = divmod(i, 64)
    y, t = divmod(rem, 32)
    ref = (
        (t < s) * 1
        + (t <= s) * 2
        + (t > s) * 4
        + (t >= s) * 8
        + (t == s) * 16
        + (31 - t < s) * 32
        + (2 * y - 3 > s - 4) * 64
        + (b == 1) * 128
        + (s - t * 3 >= 2) * 256
    )
    ref = ref + np.where((s - t * 3 >= 2) & (y < 1), 0, 512)
    np.testing.assert_array_equal(out, ref)


@settings(max_examples=20, deadline=None)
@given(
    a=st.integers(-3, 3),
    b=st.integers(-40, 40),
    c=st.integers(-50, 50),
    op=st.sampled_from(["<", "<=", ">", ">=", "=="]),
    axis=st.sampled_from(["x", "y"]),
)
def test_random_affine_guards(a: int, b: int, c: int, op: str, axis: str) -> None:
    src = f"""
    __global__ void k(float* out, const float* x) {{
        __shared__ float s[64];
        int t = threadIdx.x + blockDim.x * threadIdx.y;
        int g = blockIdx.x * 64 + t;
        s[t] = x[g];
        __syncthreads();
        if ({a} * (int)threadIdx.{axis} + {b} {op} {c}) s[t] = s[63 - t] * 2.0f;
        __syncthreads();
        out[g] = s[t];
    }}"""
    tu = tu_of(src)
    x = np.arange(3 * 64, dtype=np.float32)
    res = [
        run_kernel_full(
            tu,
            "k",
            grid=(3,),
            block=(16, 4),
            fast=f,
            chunk_threads=128,
            args={"out": np.zeros(192, np.float32), "x": x},
        ).outputs
        for f in (True, False)
    ]
    _same(*res)


def _corpus_cases():
    from cuda2nki.binding import load_binding
    from cuda2nki.diagnostics import DiagnosticError

    out = []
    for toml in sorted(CORPUS.glob("*/*.toml")):
        cu = toml.with_suffix(".cu")
        try:
            b = load_binding(toml)
        except DiagnosticError:
            continue  # a malformed binding is the corpus tests' business
        if not cu.is_file() or "expect" in (b.meta or {}):
            continue
        out.append((cu, toml))
    return out


@pytest.mark.parametrize(
    ("cu", "toml"), _corpus_cases(), ids=lambda p: p.stem if isinstance(p, Path) else ""
)
def test_corpus_kernels_fast_equals_plain(cu: Path, toml: Path) -> None:
    from cuda2nki.binding import generate_inputs, load_binding
    from cuda2nki.frontend import parse_file

    b = load_binding(toml)
    tu = parse_file(cu)
    if b.kernel and tu.function(b.kernel) is None:
        pytest.skip("kernel not accepted by the front end")
    pts = b.test_points()
    r = b.resolve(pts[-1])
    inputs = generate_inputs(r, seed=7)
    res = []
    for fast in (True, False):
        args = {**{k: v.copy() for k, v in inputs.items()}, **r.scalars}
        res.append(
            run_kernel_full(
                tu,
                b.kernel,
                grid=r.grid,
                block=r.block,
                shared_bytes=r.shared_bytes,
                args=args,
                fast=fast,
            ).outputs
        )
    _same(*res)


WARP_UNDER_BOX = """
__global__ void k(float* out, int* cnt, const float* x) {
    int t = threadIdx.x + blockDim.x * threadIdx.y;
    int g = blockIdx.x * blockDim.x * blockDim.y + t;
    float v = x[g];
    if (threadIdx.y == 1) {
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
        atomicAdd(cnt + blockIdx.x, __popc(__ballot_sync(0xffffffff, v > 0.0f)));
    }
    if (threadIdx.x < 8) v = __shfl_down_sync(0xff, v, 1, 8);
    out[g] = v;
}
"""


def test_warp_operations_and_atomics_under_box_active_sets() -> None:
    tu = tu_of(WARP_UNDER_BOX)
    x = np.random.default_rng(9).standard_normal(5 * 96).astype(np.float32)
    res = []
    for fast in (True, False):
        r = run_kernel_full(
            tu,
            "k",
            grid=(5,),
            block=(32, 3),
            fast=fast,
            chunk_threads=192,
            args={"out": np.zeros(480, np.float32), "cnt": np.zeros(5, np.int32), "x": x},
        )
        res.append(r.outputs)
    _same(*res)
    xs = x.reshape(5, 3, 32)
    np.testing.assert_allclose(
        res[0]["out"].reshape(5, 3, 32)[:, 1, 8:],
        np.repeat(xs[:, 1, :].sum(1, keepdims=True), 24, axis=1),
        rtol=1e-5,
    )
    np.testing.assert_array_equal(res[0]["cnt"], 32 * 32 * (xs[:, 1, :].sum(1) > 0))


REGISTER_ARRAYS = """
__device__ float dot4(const float* a, int t) {
    float r[4];
    for (int i = 0; i < 4; ++i) r[i] = a[t * 4 + i] * (i + 1);
    return r[t % 4] + r[(t + 1) % 4];
}
__global__ void k(const float* a, float* out, int* iout) {
    int t = threadIdx.x;
    float acc[2][3] = {{1.0f, 2.0f}, {3.0f}};
    int hist[8];
    float4 quad[2];
    for (int i = 0; i < 8; ++i) hist[i] = 0;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) acc[i][j] += a[t * 4 + j] * i;
    hist[t % 8] += 1;
    hist[(t * 3) % 8] += 2;
    acc[t % 2][t % 3] *= 2.0f;
    quad[t % 2] = make_float4(a[t], 1.0f, 2.0f, 3.0f);
    quad[1 - t % 2].y = 7.0f;
    float un[3];
    if (t < 5) un[1] = 1.0f;
    out[t * 8 + 0] = acc[0][t % 3] + acc[1][(t + 1) % 3];
    out[t * 8 + 1] = dot4(a, t);
    out[t * 8 + 2] = quad[0].x + quad[1].y;
    out[t * 8 + 3] = un[1];
    out[t * 8 + 4] = acc[1][2];
    iout[t] = hist[t % 8] * 10 + hist[(t + 5) % 8];
}
"""


@pytest.mark.parametrize("poison", [True, False])
def test_register_promoted_local_arrays_match_memory_arrays(poison: bool) -> None:
    tu = tu_of(REGISTER_ARRAYS)
    a = np.random.default_rng(4).standard_normal(64 * 4).astype(np.float32)
    res = []
    for fast in (True, False):
        r = run_kernel_full(
            tu,
            "k",
            block=(40,),
            grid=(1,),
            fast=fast,
            poison_shared=poison,
            args={"a": a, "out": np.zeros(40 * 8, np.float32), "iout": np.zeros(40, np.int32)},
        )
        res.append(r.outputs)
    _same(*res)
    out = res[0]["out"].reshape(40, 8)
    assert np.all(out[:5, 3] == 1.0)
    assert np.all(np.isnan(out[5:, 3])) if poison else np.all(out[5:, 3] == 0.0)


def test_register_array_out_of_bounds_is_diagnosed_at_line() -> None:
    from cuda2nki.diagnostics import DiagnosticError

    src = """
    __global__ void k(float* y) {
        float r[4];
        for (int i = 0; i < 4; ++i) r[i] = i;
        y[threadIdx.x] = r[threadIdx.x];
    }"""
    tu = tu_of(src)
    with pytest.raises(DiagnosticError) as ei:
        run_kernel_full(tu, "k", grid=(1,), block=(6,), args={"y": np.zeros(6, np.float32)})
    d = ei.value.diagnostic
    assert d.code == "C2N1500" and d.loc.line == 5 and "local read of 'r'" in d.message
    assert "thread (4, 0, 0)" in d.message


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 3), st.integers(0, 3), st.integers(0, 3)), min_size=6, max_size=6
    )
)
def test_box_flat_run_selects_what_the_6d_slices_select(axes: list[tuple[int, int, int]]) -> None:
    """Box.flat's run of thread positions, where it finds one, holds exactly the box's threads in
    the same order; it finds one whenever the box's positions are consecutive."""
    from cuda2nki.simt.chunk import _flat_run

    full = tuple(n for n, _, _ in axes)
    lo = tuple(min(a, n - 1) for n, a, _ in axes)
    hi = tuple(min(lo_ + 1 + b, n) for (n, _, b), lo_ in zip(axes, lo))
    shape = tuple(h - b for b, h in zip(lo, hi))
    ids = np.arange(int(np.prod(full)))
    want = ids.reshape(full)[tuple(slice(b, h) for b, h in zip(lo, hi))].reshape(-1)
    run = _flat_run(full, lo, shape)
    consecutive = bool(np.all(np.diff(want) == 1))
    assert (run is not None) == consecutive
    if run is not None:
        np.testing.assert_array_equal(ids[run], want)
