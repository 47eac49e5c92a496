"""Control flow and data forms the lifter runs in an equivalent form: ``switch`` as an ``if``
chain, ``while`` loops that step a variable of their condition, ``__constant__`` tables,
clamped neighbour indices, shared scalar accumulators, packed ``__half2`` arithmetic.

Each spelling is lifted (the intent IR must evaluate to the NumPy meaning on every test point);
the ``PORT`` subset is also ported and run in the NKI simulator against the SIMT interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict, generate_inputs
from cuda2nki.frontend import parse_source
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.lift import lift_kernel


def _b(launch: dict, params: dict, shapes: list[dict] | None = None) -> dict:
    return {"kernel": "k", "launch": launch, "params": params, "check": {"shapes": shapes or []}}


def t(shape: list, role: str, dtype: str = "float32", **kw) -> dict:
    return {"shape": shape, "dtype": dtype, "role": role, **kw}


def _act(x: np.ndarray, mode: int, slope: float) -> np.ndarray:
    if mode == 0:
        return np.maximum(x, 0)
    if mode == 1:
        return np.where(x > 0, x, slope * x)
    if mode == 2:
        return np.tanh(x)
    return x


_MAP1 = {"grid": ["ceil_div(n, 128)"], "block": [128]}

CASES = [
    (
        "switch/break_per_case",
        """
__global__ void k(float* data, int n, int mode, float slope) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = data[i];
        switch (mode) {
            case 0: v = v > 0.0f ? v : 0.0f; break;
            case 1: v = v > 0.0f ? v : slope * v; break;
            case 2: v = tanhf(v); break;
            default: break;
        }
        data[i] = v;
    }
}""",
        _b(
            _MAP1,
            {"data": t(["n"], "inout"), "n": 300, "mode": 1, "slope": 0.1},
            [{"n": 129, "mode": 0}, {"n": 77, "mode": 2}, {"n": 200, "mode": 5}],
        ),
        "map",
        lambda a, s: {"data": _act(a["data"], s["mode"], s["slope"])},
    ),
    (
        "switch/fallthrough_default_first_return",
        """
__global__ void k(const float* x, float* y, int count, int op) {
    int g = threadIdx.x + blockDim.x * blockIdx.x;
    if (g >= count) return;
    float r = x[g];
    switch (op) {
    default:
        y[g] = -r;
        return;
    case 3:
    case 4:
        r = r * 2.0f;
    case 5:
        r = r + 1.0f;
    }
    y[g] = r;
}""",
        _b(
            {"grid": ["ceil_div(count, 64)"], "block": [64]},
            {"x": t(["count"], "in"), "y": t(["count"], "out"), "count": 200, "op": 3},
            [{"count": 65, "op": 4}, {"count": 100, "op": 5}, {"count": 33, "op": 0}],
        ),
        "map",
        lambda a, s: {
            "y": {3: 2 * a["x"] + 1, 4: 2 * a["x"] + 1, 5: a["x"] + 1}.get(s["op"], -a["x"])
        },
    ),
    (
        "switch/on_data_2d",
        """
__global__ void k(const int* code, const float* x, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        float v = x[r * cols + c];
        float o = 0.0f;
        switch (code[r * cols + c]) {
            case 1: o = v * v; break;
            case 2: { float h = 0.5f * v; o = h + 3.0f; break; }
            case 7: o = fabsf(v);
        }
        out[r * cols + c] = o;
    }
}""",
        _b(
            {"grid": ["ceil_div(cols, 16)", "ceil_div(rows, 8)"], "block": [16, 8]},
            {
                "code": t(["rows", "cols"], "in", "int32", range=[0, 9]),
                "x": t(["rows", "cols"], "in"),
                "out": t(["rows", "cols"], "out"),
                "rows": 20,
                "cols": 40,
            },
            [{"rows": 9, "cols": 17}],
        ),
        "map",
        lambda a, s: {
            "out": np.select(
                [a["code"] == 1, a["code"] == 2, a["code"] == 7],
                [a["x"] ** 2, 0.5 * a["x"] + 3, np.abs(a["x"])],
                0.0,
            )
        },
    ),
    (
        "while/block_stride_then_tree",
        """
__global__ void k(const float* partials, float* out, int m) {
    __shared__ float cache[256];
    int t = threadIdx.x;
    float v = 0.0f;
    int j = t;
    while (j < m) { v += partials[j]; j += blockDim.x; }
    cache[t] = v;
    __syncthreads();
    int s = blockDim.x / 2;
    while (s > 0) {
        if (t < s) cache[t] += cache[t + s];
        __syncthreads();
        s >>= 1;
    }
    if (t == 0) out[0] = cache[0];
}""",
        _b(
            {"grid": [1], "block": [256]},
            {"partials": t(["m"], "in"), "out": t([1], "out"), "m": 1000},
            [{"m": 1}, {"m": 257}],
        ),
        "reduce",
        lambda a, s: {"out": np.array([a["partials"].sum()])},
    ),
    (
        "while/grid_stride_map",
        """
__global__ void k(const float* a, float* b, int n) {
    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
    while (idx < n) {
        b[idx] = 2.0f * a[idx] - 1.0f;
        idx = idx + blockDim.x * gridDim.x;
    }
}""",
        _b(
            {"grid": [4], "block": [64]},
            {"a": t(["n"], "in"), "b": t(["n"], "out"), "n": 1000},
            [{"n": 3}, {"n": 256}],
        ),
        "map",
        lambda a, s: {"b": 2 * a["a"] - 1},
    ),
    (
        "while/row_loop_counter",
        """
__global__ void k(const float* mat, float* sums, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float acc = 0.0f;
        int c = 0;
        while (c < cols) {
            acc += mat[row * cols + c];
            c++;
        }
        sums[row] = acc;
    }
}""",
        _b(
            {"grid": ["ceil_div(rows, 32)"], "block": [32]},
            {"mat": t(["rows", "cols"], "in"), "sums": t(["rows"], "out"), "rows": 40, "cols": 9},
            [{"rows": 3, "cols": 100}],
        ),
        "reduce",
        lambda a, s: {"sums": a["mat"].sum(1)},
    ),
]

#: also ported and compared with the SIMT interpreter in the NKI simulator
PORT = {
    "switch/break_per_case",
    "switch/on_data_2d",
    "while/grid_stride_map",
    "while/row_loop_counter",
}


def _lift(vid: str, src: str, bdict: dict):
    binding = binding_from_dict(bdict, path=f"<{vid}>")
    res = lift_kernel(parse_source(src, f"{vid.replace('/', '_')}.cu"), "k", binding)
    assert res.claimed, [d.message for d in res.diagnostics]
    return binding, res


@pytest.mark.parametrize(
    ("vid", "src", "bdict", "idiom", "meaning"), CASES, ids=[c[0] for c in CASES]
)
def test_lifts_to_its_meaning(vid, src, bdict, idiom, meaning) -> None:
    binding, res = _lift(vid, src, bdict)
    assert res.idiom == idiom
    for k, point in enumerate(binding.test_points()):
        resolved = binding.resolve(point)
        inputs = generate_inputs(resolved, seed=11 + k)
        got = evaluate(
            res.kernel_ir, {n: v.copy() for n, v in inputs.items()}, dict(resolved.scalars)
        )
        want = meaning(
            {n: v.astype(np.float64) if v.dtype.kind == "f" else v for n, v in inputs.items()},
            dict(resolved.scalars),
        )
        for name, ref in want.items():
            np.testing.assert_allclose(
                np.asarray(got[name], np.float64).reshape(np.shape(ref)),
                ref,
                rtol=1e-4,
                atol=1e-4,
                err_msg=f"{vid}:{name} at {resolved.scalars}",
            )


@pytest.mark.parametrize("vid", sorted(PORT))
def test_port_matches_simt(vid, tmp_path) -> None:
    from cuda2nki.codegen.pipeline import port_file
    from cuda2nki.codegen.spell import py_name
    from cuda2nki.nkisim.importer import load_kernel
    from cuda2nki.nkisim.kernel import simulate_kernel
    from cuda2nki.simt.runner import run_kernel

    _, src, bdict, _, _ = next(c for c in CASES if c[0] == vid)
    path = tmp_path / "k.cu"
    path.write_text(src)
    binding = binding_from_dict(bdict, path=f"<{vid}>")
    res = port_file(path, binding=binding, target="nki")
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    (tmp_path / "port.py").write_text(res.source)
    fn = load_kernel(tmp_path / "port.py", py_name(res.kernel))
    for k, point in enumerate(binding.test_points()):
        resolved = binding.resolve(point)
        inputs = generate_inputs(resolved, seed=3 + k)
        ref = run_kernel(
            res.tu,
            res.kernel,
            grid=resolved.grid,
            block=resolved.block,
            shared_bytes=resolved.shared_bytes,
            args={**inputs, **resolved.scalars},
        )
        args = {py_name(x.name): inputs[x.name] for x in binding.tensors if x.role != "out"}
        sim = simulate_kernel(fn, {**args, **_scalars(res, resolved)})
        outs = sim.outputs if isinstance(sim.outputs, tuple) else (sim.outputs,)
        names = [x.name for x in binding.tensors if x.role in ("out", "inout")]
        for name, got in zip(names, outs):
            want = np.asarray(ref[name], np.float64)
            np.testing.assert_allclose(
                np.asarray(got, np.float64).reshape(want.shape),
                want,
                rtol=1e-4,
                atol=1e-4,
                err_msg=f"{vid}:{name} at {point}",
            )


def _scalars(res, resolved) -> dict:
    from cuda2nki.codegen.emit import signature
    from cuda2nki.codegen.spell import py_name

    keys = {n for n, _ in signature(res.ir_tiles).keywords}
    return {py_name(k): v for k, v in resolved.scalars.items() if py_name(k) in keys}
