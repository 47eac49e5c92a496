"""The error bound of an index-valued reduction (argmin / argmax over computed keys): exact where
the extremum is unique by more than the keys' error, wide only at near ties
(cuda2nki.ir.extremum).  Spellings: min and max, strict and non-strict comparisons, keys
computed inline, by a device function, or read from a float or an int tensor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.fidelity.compare import vacuous
from cuda2nki.ir.evaluate import error_bound
from cuda2nki.ir.extremum import candidate_var, extremum_of
from cuda2nki.ir.nodes import Binary, Lit
from cuda2nki.ir.ops import Op
from cuda2nki.pipeline import port_file
from tests.port.acceptance import tensor_param

NEAREST = """
__global__ void k(const float* p, const float* c, int* lab, int n, int m, int d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float best = 3.0e38f;
    int bi = 0;
    for (int j = 0; j < m; ++j) {
        float s = 0.0f;
        for (int f = 0; f < d; ++f) { float t = p[i * d + f] - c[j * d + f]; s += t * t; }
        if (s < best) { best = s; bi = j; }
    }
    lab[i] = bi;
}"""

DEVICE_FN_LAST = """
__device__ float l1(const float* a, const float* b, int d) {
    float s = 0.0f;
    for (int f = 0; f < d; f++) s += fabsf(a[f] - b[f]);
    return s;
}
__global__ void k(const float* p, const float* c, int* lab, int n, int m, int d) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < n) {
        float lo = 1e30f;
        int at = -1;
        for (int j = 0; j < m; j++) {
            float s = l1(p + i * d, c + j * d, d);
            if (s <= lo) { lo = s; at = j; }
        }
        lab[i] = at;
    }
}"""

SCORE_MAX = """
__global__ void k(const float* p, const float* c, int* lab, int n, int m, int d) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    float top = -3.0e38f;
    int which = 0;
    for (int q = 0; q < m; q++) {
        float dot = 0.0f;
        for (int f = 0; f < d; f++) dot += p[row * d + f] * c[q * d + f];
        if (dot > top) { top = dot; which = q; }
    }
    lab[row] = which;
}"""

INT_KEYS = """
__global__ void k(const int* x, int* lab, int n, int m) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    int best = 2147483647;
    int bi = 0;
    for (int j = 0; j < m; j++) {
        int v = x[r * m + j];
        if (v < best) { best = v; bi = j; }
    }
    lab[r] = bi;
}"""


def _binding(cu: Path, ints: bool = False) -> object:
    if ints:
        params = {
            "x": {"shape": ["n", "m"], "dtype": "int32", "role": "in", "range": [0, 50]},
            "lab": {"shape": ["n"], "dtype": "int32", "role": "out"},
            "n": 200,
            "m": 9,
        }
    else:
        params = {
            "p": tensor_param(["n", "d"], "in"),
            "c": tensor_param(["m", "d"], "in"),
            "lab": {"shape": ["n"], "dtype": "int32", "role": "out"},
            "n": 200,
            "m": 6,
            "d": 5,
        }
    bdict = {"launch": {"grid": ["ceil_div(n, 128)"], "block": [128]}, "params": params}
    return binding_from_dict({"kernel": "k", **bdict}, path=str(cu))


def _intent(tmp: Path, src: str, ints: bool = False):
    cu = tmp / "k.cu"
    cu.write_text(src)
    res = port_file(cu, binding=_binding(cu, ints))
    assert res.ir_intent is not None and res.idiom in ("reduce", "contract")
    return res.ir_intent


def _inputs(rng: np.random.Generator) -> tuple[dict, dict]:
    p = rng.standard_normal((200, 5)).astype(np.float32)
    c = rng.standard_normal((6, 5)).astype(np.float32)
    return {"p": p, "c": c}, {"n": 200, "m": 6, "d": 5}


def _keys(src: str, p: np.ndarray, c: np.ndarray) -> np.ndarray:
    p64, c64 = p.astype(np.float64), c.astype(np.float64)
    if src is SCORE_MAX:
        return -(p64 @ c64.T)
    if src is DEVICE_FN_LAST:
        return np.abs(p64[:, None, :] - c64[None]).sum(-1)
    return ((p64[:, None, :] - c64[None]) ** 2).sum(-1)


@pytest.mark.parametrize(
    "src", [NEAREST, DEVICE_FN_LAST, SCORE_MAX], ids=["nearest", "device_fn_le", "dot_max"]
)
def test_a_unique_extremum_pins_the_index_exactly(src: str, tmp_path: Path) -> None:
    ir = _intent(tmp_path, src)
    rng = np.random.default_rng(11)
    inputs, scalars = _inputs(rng)
    bound = error_bound(ir, inputs, scalars, u_in=0.0)["lab"]
    keys = _keys(src, inputs["p"], inputs["c"])
    srt = np.sort(keys, axis=1)
    clear = (srt[:, 1] - srt[:, 0]) > 1e-4 * np.abs(srt[:, :2]).max(axis=1)
    assert clear.sum() > 150 and np.all(bound[clear] == 0.0)
    ref = np.argmin(keys, axis=1).astype(np.int32)
    assert not vacuous(ref, bound, rng)


@pytest.mark.parametrize("src", [NEAREST, DEVICE_FN_LAST], ids=["nearest", "device_fn_le"])
def test_a_tie_leaves_exactly_its_rows_open(src: str, tmp_path: Path) -> None:
    """Two equal centroids: every row whose nearest is one of them may take either index."""
    ir = _intent(tmp_path, src)
    inputs, scalars = _inputs(np.random.default_rng(5))
    c = inputs["c"].copy()
    c[4] = c[1]
    inputs["c"] = c
    bound = error_bound(ir, inputs, scalars, u_in=0.0)["lab"]
    near = np.argmin(_keys(src, inputs["p"], c), axis=1)
    tied = np.isin(near, (1, 4))
    assert tied.any() and np.all(bound[tied] >= 3) and np.all(bound[~tied] == 0.0)


def test_int_keys_stay_exact(tmp_path: Path) -> None:
    ir = _intent(tmp_path, INT_KEYS, ints=True)
    x = np.random.default_rng(2).integers(0, 50, (200, 9)).astype(np.int32)
    assert not np.any(error_bound(ir, {"x": x}, {"n": 200, "m": 9}, u_in=0.0)["lab"])


def test_only_a_reduction_of_the_same_candidates_counts(tmp_path: Path) -> None:
    ir = _intent(tmp_path, NEAREST)
    comps = [c for c in ir.body if hasattr(c, "expr")]
    found = []

    def walk(e, out):
        out.append(e)
        for f in ("a", "b", "cond", "body", "x"):
            if hasattr(e, f) and getattr(e, f) is not None:
                walk(getattr(e, f), out)

    nodes: list = []
    for c in comps:
        walk(c.expr, nodes)
    for e in nodes:
        if getattr(e, "op", None) is Op.EQ:
            red = extremum_of(e.b)
            assert red is not None
            found.append(candidate_var(e.a, red))
            other = red.replace(body=Binary(Op.MUL, red.body, Lit(2.0)))  # another key

            assert candidate_var(e.a, other) is None
    assert found and all(v is not None for v in found)
