"""merge-lanes: the lanes of a vector access (float4, half2...) become one statement over the flat
axis; what it must leave alone; and that vectorised CUDA kernels port to full-width tiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.nodes import Compute
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text
from cuda2nki.nkisim import load_kernel, simulate_kernel
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from tests.port.acceptance import port_source

HEAD = (
    "kernel k(x: in float32[4 * n], b: in float32[n], y: out float32[4 * n], n: int32, "
    "s: float32) {\n"
)


def _kernel(*stmts: str, head: str = HEAD):
    return parse(head + "".join(f"  map: {s};\n" for s in stmts) + "}\n", "k.ir")


def _merge(kernel):
    return run_pipeline(kernel, parse_pipeline("merge-lanes"), PassContext())


def _same_meaning(before, after, n: int = 7) -> None:
    rng = np.random.default_rng(5)
    inputs = {
        "x": rng.standard_normal(4 * n).astype(np.float32),
        "b": rng.standard_normal(n).astype(np.float32),
    }
    scalars = {"n": n, "s": 1.5}
    want = evaluate(before, inputs, scalars)["y"]
    got = evaluate(after, inputs, scalars)["y"]
    np.testing.assert_array_equal(got, want)


def _lanes(fmt: str, order=(0, 1, 2, 3), names="ijkl") -> list[str]:
    """One statement per lane: ``fmt`` with ``{v}`` the lane's axis and ``{c}`` its offset."""
    return [fmt.format(v=names[c], c=c) for c in order]


MERGEABLE = [
    # relu over float4 (the lifter's spelling: one axis name per lane)
    _lanes("y[{c} + 4 * {v}] = max(x[{c} + 4 * {v}], 0.0) for {v} < n"),
    # lanes out of order (.w first) and the index written the other way round
    _lanes("y[4 * {v} + {c}] = x[4 * {v} + {c}] * s for {v} < n", order=(3, 1, 0, 2)),
    # one axis name for every lane, and a per-vector operand every lane shares
    _lanes("y[4 * {v} + {c}] = x[4 * {v} + {c}] + b[{v}] for {v} < n", names="tttt"),
    # in place: each lane reads only the element it writes
    _lanes("y[4 * {v} + {c}] = exp(x[4 * {v} + {c}]) for {v} < n"),
]


@pytest.mark.parametrize("stmts", MERGEABLE)
def test_lanes_merge_into_one_flat_statement(stmts: list[str]) -> None:
    before = _kernel(*stmts)
    after = _merge(before)
    assert len(after.body) == 1, to_text(after)
    (axis,) = after.body[0].domain.axes
    assert to_text(axis.extent) in ("4 * n", "n * 4"), to_text(after)
    _same_meaning(before, after)
    _same_meaning(before, after, n=1)


def test_two_lanes_on_the_inner_dim_of_a_matrix() -> None:
    head = "kernel k(x: in float32[R, 2 * C], y: out float32[R, 2 * C], R: int32, C: int32) {\n"
    before = _kernel(
        "y[r, 2 * q] = x[r, 2 * q] * 2.0 for r < R, q < C",
        "y[i, 1 + 2 * j] = x[i, 1 + 2 * j] * 2.0 for i < R, j < C",
        head=head,
    )
    after = _merge(before)
    assert len(after.body) == 1, to_text(after)
    x = np.arange(5 * 6, dtype=np.float32).reshape(5, 6)
    want = evaluate(before, {"x": x}, {"R": 5, "C": 3})["y"]
    np.testing.assert_array_equal(evaluate(after, {"x": x}, {"R": 5, "C": 3})["y"], want)


def test_scalar_tail_joins_the_merged_lanes() -> None:
    head = "kernel k(x: in float32[n], y: out float32[n], n: int32) {\n"
    lanes = _lanes("y[4 * {v} + {c}] = x[4 * {v} + {c}] * 3.0 for {v} < n // 4")
    before = _kernel(
        *lanes, "y[4 * (n // 4) + m] = x[4 * (n // 4) + m] * 3.0 for m < n % 4", head=head
    )
    after = _merge(before)
    assert len(after.body) == 1, to_text(after)
    assert to_text(after.body[0].domain.axes[0].extent) == "n", to_text(after)
    for n in (0, 3, 4, 13):
        x = np.arange(n, dtype=np.float32)
        want = evaluate(before, {"x": x}, {"n": n})["y"]
        np.testing.assert_array_equal(evaluate(after, {"x": x}, {"n": n})["y"], want)


LEFT_ALONE = [
    # a swizzle: lane c reads another lane's element
    ["y[4 * i] = x[1 + 4 * i] for i < n", "y[1 + 4 * i] = x[4 * i] for i < n"]
    + _lanes("y[4 * {v} + {c}] = x[4 * {v} + {c}] for {v} < n", order=(2, 3)),
    # different computations per lane
    _lanes("y[4 * {v} + {c}] = x[4 * {v} + {c}] * s for {v} < n", order=(0, 1, 2))
    + ["y[3 + 4 * l] = x[3 + 4 * l] + s for l < n"],
    # a lane constant that is not the lane's own offset
    _lanes("y[4 * {v} + {c}] = x[4 * {v} + {c}] * " + "{c}.0" + " for {v} < n"),
    # a lane missing
    _lanes("y[4 * {v} + {c}] = x[4 * {v} + {c}] for {v} < n", order=(0, 1, 3)),
    # lane 1 reads what lane 0 wrote
    ["y[4 * i] = x[4 * i] for i < n", "y[1 + 4 * i] = y[4 * i] for i < n"]
    + _lanes("y[4 * {v} + {c}] = x[4 * {v} + {c}] for {v} < n", order=(2, 3)),
]


@pytest.mark.parametrize("stmts", LEFT_ALONE)
def test_statements_that_are_not_lanes_are_left_alone(stmts: list[str]) -> None:
    before = _kernel(*stmts)
    after = _merge(before)
    assert [s for s in after.body if isinstance(s, Compute)] == list(before.body), to_text(after)


def test_lanes_reading_a_neighbour_lane_of_the_target_are_left_alone() -> None:
    """Lane 3 reads lane 0 of the next vector, already overwritten when lanes run one by one."""
    head = "kernel k(y: inout float32[4 * n], n: int32) {\n"
    before = _kernel(*_lanes("y[4 * {v} + {c}] = y[4 * {v} + {c} + 1] for {v} < n - 1"), head=head)
    assert _merge(before) == before


# ---------------------------------------------------------------------- from CUDA, end to end

RELU4 = """
__global__ void relu4(const float4* __restrict__ src, float4* __restrict__ dst, int n4) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n4) {
        float4 v = src[t];
        dst[t] = make_float4(fmaxf(v.x, 0.0f), fmaxf(v.y, 0.0f), fmaxf(v.z, 0.0f), fmaxf(v.w, 0.0f));
    }
}
"""
RELU4_BINDING = """
kernel = "relu4"
[launch]
grid = ["ceil_div(n4, 128)"]
block = [128]
[params]
src = { shape = ["4 * n4"], dtype = "float32", role = "in" }
dst = { shape = ["4 * n4"], dtype = "float32", role = "out" }
n4 = 2000
"""

SCALE2 = """
__global__ void scale2(float2* out, const float2* xs, float alpha, int pairs) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx >= pairs) return;
    float2 p = xs[idx];
    float2 q;
    q.y = alpha * p.y;
    q.x = alpha * p.x;
    out[idx] = q;
}
"""
SCALE2_BINDING = """
kernel = "scale2"
[launch]
grid = ["ceil_div(pairs, 64)"]
block = [64]
[params]
out = { shape = ["2 * pairs"], dtype = "float32", role = "out" }
xs = { shape = ["2 * pairs"], dtype = "float32", role = "in" }
alpha = 0.5
pairs = 3001
"""

SCALE4_TAIL = """
__global__ void scale4_tail(float* o, const float* a, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int v = i; v < n / 4; v += stride) {
        float4 x = reinterpret_cast<const float4*>(a)[v];
        x.x *= k; x.y *= k; x.z *= k; x.w *= k;
        reinterpret_cast<float4*>(o)[v] = x;
    }
    if (i == 0) {
        for (int r = 4 * (n / 4); r < n; r++) o[r] = a[r] * k;
    }
}
"""
SCALE4_TAIL_BINDING = """
kernel = "scale4_tail"
[launch]
grid = [16]
block = [256]
[params]
o = { shape = ["n"], dtype = "float32", role = "out" }
a = { shape = ["n"], dtype = "float32", role = "in" }
k = 3.0
n = 10003
"""

CASES = {
    "relu4": (RELU4, RELU4_BINDING, "src", 8000, lambda x: np.maximum(x, np.float32(0))),
    "scale2": (SCALE2, SCALE2_BINDING, "xs", 6002, lambda x: np.float32(0.5) * x),
    "scale4_tail": (SCALE4_TAIL, SCALE4_TAIL_BINDING, "a", 10003, lambda x: x * np.float32(3)),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vectorised_kernels_port_to_full_width_tiles(
    tmp_path: Path, name: str, target: str
) -> None:
    src, binding, arg, n, ref = CASES[name]
    done = port_source(tmp_path, name, src, binding, target=target)
    assert done.res.idiom != "literal", done.res.diagnostics
    x = np.linspace(-2, 2, n, dtype=np.float32)
    sim = simulate_kernel(load_kernel(str(done.port), name), {arg: x})
    np.testing.assert_array_equal(np.asarray(sim.outputs).reshape(-1), ref(x))
    dmas = [r for r in sim.trace if r.engine == "dma"]
    # one load and one store per tile (at most a full block, a row block and a tail row)
    assert len(dmas) <= 6, len(dmas)
    assert max(r.partitions for r in dmas) >= 100


# ---------------------------------------------------------------------- lanes inside a reduction

RHEAD = "kernel k(x: in float32[R, 4 * n], y: out float32[R], R: int32, n: int32) {\n"


def _reduce_kernel(body: str, op: str = "add"):
    text = f"  reduce: y[i] = reduce({op}, j < n: {body}; acc float32) for i < R;\n"
    return parse(RHEAD + text + "}\n", "k.ir")


def _same_reduction(before, after, n: int = 5, rows: int = 3) -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((rows, 4 * n)).astype(np.float32)
    want = evaluate(before, {"x": x}, {"R": rows, "n": n})["y"]
    got = evaluate(after, {"x": x}, {"R": rows, "n": n})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


REDUCE_LANES = [
    # acc += v[0] + v[1] + v[2] + v[3] (the unrolled lane loop's association)
    ("x[i, 4 * j] + x[i, 1 + 4 * j] + x[i, 2 + 4 * j] + x[i, 3 + 4 * j]", "add"),
    # balanced tree, lanes out of order, the index written the other way round
    ("(x[i, j * 4 + 2] + x[i, j * 4]) + (x[i, j * 4 + 3] + x[i, j * 4 + 1])", "add"),
    # a function of each lane, a maximum
    (
        "max(max(abs(x[i, 4 * j]), abs(x[i, 1 + 4 * j])), max(abs(x[i, 2 + 4 * j]), "
        "abs(x[i, 3 + 4 * j])))",
        "max",
    ),
]


@pytest.mark.parametrize(("body", "op"), REDUCE_LANES)
def test_lanes_combined_inside_a_reduction_become_one_flat_axis(body: str, op: str) -> None:
    before = _reduce_kernel(body, op)
    after = _merge(before)
    text = to_text(after)
    assert "4 * j" not in text and "j * 4" not in text, text
    assert "j < 4 * n" in text, text
    _same_reduction(before, after)
    _same_reduction(before, after, n=1, rows=1)


REDUCE_LEFT_ALONE = [
    # two lanes only out of four: not a whole vector
    "x[i, 4 * j] + x[i, 1 + 4 * j]",
    # lanes that compute different things
    "x[i, 4 * j] + x[i, 1 + 4 * j] * 2.0 + x[i, 2 + 4 * j] + x[i, 3 + 4 * j]",
    # a lane repeated, one missing
    "x[i, 4 * j] + x[i, 1 + 4 * j] + x[i, 1 + 4 * j] + x[i, 3 + 4 * j]",
]


@pytest.mark.parametrize("body", REDUCE_LEFT_ALONE)
def test_reductions_that_are_not_whole_vectors_are_left_alone(body: str) -> None:
    before = _reduce_kernel(body)
    after = _merge(before)
    assert "j < n" in to_text(after), to_text(after)
    _same_reduction(before, after)


# ---------------------------------------------------------------------- nested reductions

NHEAD = "kernel k(x: in float32[R, C], y: out float32[R], R: int32, C: int32) {\n"


def _nested(inner: str, op: str = "add"):
    return parse(NHEAD + f"  reduce: y[i] = {inner.format(op=op)} for i < R;\n}}\n", "k.ir")


NESTED = [
    # a block's warps (j), their lanes (k) and each thread's stride loop (l), masked at C
    "reduce({op}, j < 4: reduce({op}, k < 32: reduce({op}, l < (127 + C) // 128: "
    "x[i, 128 * l + k + 32 * j]; acc float32; where index(128 * l + k + 32 * j) < index(C)); "
    "acc float32); acc float32)",
    # two levels, the strides written the other way round
    "reduce({op}, a < 16: reduce({op}, b < (C + 15) // 16: x[i, a + b * 16]; acc float32; "
    "where index(a + b * 16) < index(C)); acc float32)",
]


@pytest.mark.parametrize("op", ["add", "max"])
@pytest.mark.parametrize("inner", NESTED)
def test_nested_reductions_over_one_mixed_radix_index_fuse(inner: str, op: str) -> None:
    before = _nested(inner, op)
    after = _merge(before)
    text = to_text(after)
    assert text.count("reduce(") == 1 and "where" not in text, text
    for rows, cols in ((3, 77), (2, 128), (1, 1), (4, 300)):
        rng = np.random.default_rng(cols)
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        want = evaluate(before, {"x": x}, {"R": rows, "C": cols})["y"]
        got = evaluate(after, {"x": x}, {"R": rows, "C": cols})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


NOT_NESTED = [
    # strides that skip elements (a gap between 1 * 8 and 32)
    "reduce(add, j < 4: reduce(add, k < 8: x[i, 32 * j + k]; acc float32); acc float32)",
    # different ops
    "reduce(add, j < 4: reduce(max, k < 32: x[i, 32 * j + k]; acc float32); acc float32)",
    # a mask on the outer level
    "reduce(add, j < 4: reduce(add, k < 32: x[i, 32 * j + k]; acc float32); acc float32; "
    "where index(j) < index(2))",
]


@pytest.mark.parametrize("inner", NOT_NESTED)
def test_nested_reductions_that_are_not_one_index_stay(inner: str) -> None:
    before = parse(
        "kernel k(x: in float32[R, 128], y: out float32[R], R: int32) {\n"
        f"  reduce: y[i] = {inner} for i < R;\n}}\n",
        "k.ir",
    )
    after = _merge(before)
    assert to_text(after).count("reduce(") == 2, to_text(after)
