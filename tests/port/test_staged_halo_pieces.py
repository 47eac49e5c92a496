"""A window staged in shared memory piece by piece -- the block's elements under ``g < n``, the
low halo under a one-sided ``lo >= 0``, the high halo under ``hi < n`` -- reads back as one
zero-padded window of the input: the test a halo piece lacks holds because the reading thread
is inside the array (its own guard), whatever the element type, radius, block size or spelling
of the guards.  The port is one halo tile per chunk on all partitions, with no finding above a
note from our own ``check``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.ir.nodes import Compute, Select
from tests.port.acceptance import grid_binding, port_variant, tensor_param

#: the corpus spelling's shape: ternaries, the halo indices in variables
TERNARY = """
#define R RADIUS
#define TILE BLOCK
__global__ void k(const T* src, T* dst, int count) {
    __shared__ T tile[TILE + 2 * R];
    int g = blockIdx.x * TILE + threadIdx.x;
    int l = threadIdx.x + R;
    tile[l] = g < count ? src[g] : 0;
    if (threadIdx.x < R) {
        int lo = g - R, hi = g + TILE;
        tile[l - R] = lo >= 0 ? src[lo] : 0;
        tile[l + TILE] = count > hi ? src[hi] : 0;
    }
    __syncthreads();
    if (g >= count) return;
    T total = 0;
    for (int d = -R; d <= R; ++d) total += tile[l + d];
    dst[g] = total;
}
"""

#: if/else branches, the halo tests written on the thread index, a weighted sum
BRANCHES = """
__global__ void k(const T* x, const T* w, T* y, int n) {
    __shared__ T s[BLOCK + 2 * RADIUS];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) s[t + RADIUS] = x[i]; else s[t + RADIUS] = 0;
    if (t < RADIUS) {
        if (i - RADIUS >= 0) s[t] = x[i - RADIUS]; else s[t] = 0;
        if (i + BLOCK < n) s[t + BLOCK + RADIUS] = x[i + BLOCK]; else s[t + BLOCK + RADIUS] = 0;
    }
    __syncthreads();
    if (i < n) {
        T acc = 0;
        for (int o = 0; o <= 2 * RADIUS; o++) acc += w[o] * s[t + o];
        y[i] = acc;
    }
}
"""


def _ternary(dtype: str, radius: int, block: int) -> tuple[str, dict]:
    ctype = {"int32": "int", "float32": "float"}[dtype]
    src = TERNARY.replace("RADIUS", str(radius)).replace("BLOCK", str(block))
    params = {
        "src": tensor_param(["count"], "in", dtype, [-1000, 1000]),
        "dst": tensor_param(["count"], "out", dtype),
        "count": 2000,
    }
    shapes = [{"count": 513}, {"count": 3}, {"count": block + 1}]
    bind = grid_binding([f"ceil_div(count, {block})"], params, shapes, block=block)
    return src.replace("T*", f"{ctype}*").replace("T ", f"{ctype} "), bind


def _branches(dtype: str, radius: int, block: int) -> tuple[str, dict]:
    ctype = {"int32": "int", "float32": "float"}[dtype]
    src = BRANCHES.replace("RADIUS", str(radius)).replace("BLOCK", str(block))
    params = {
        "x": tensor_param(["n"], "in", dtype, [-100, 100]),
        "w": tensor_param([2 * radius + 1], "in", dtype, [-4, 4]),
        "y": tensor_param(["n"], "out", dtype),
        "n": 1500,
    }
    shapes = [{"n": 700}, {"n": 2}, {"n": block}]
    bind = grid_binding([f"ceil_div(n, {block})"], params, shapes, block=block)
    return src.replace("T*", f"{ctype}*").replace("T ", f"{ctype} "), bind


CASES = {
    "int_r2_b128": _ternary("int32", 2, 128),
    "float_r1_b64": _ternary("float32", 1, 64),
    "int_r3_b256": _ternary("int32", 3, 256),
    "float_weighted_r2_b128": _branches("float32", 2, 128),
    "int_weighted_r1_b64": _branches("int32", 1, 64),
}


def _selects(e) -> int:
    if isinstance(e, Select):
        return 1 + _selects(e.a) + _selects(e.b)
    kids = [getattr(e, f) for f in ("a", "b", "body", "x") if hasattr(e, f)]
    return sum(_selects(k) for k in kids if k is not None and not isinstance(k, str | int))


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", CASES)
def test_pieces_read_back_as_one_window(name: str, target: str, tmp_path: Path) -> None:
    src, bind = CASES[name]
    res, run, points = port_variant(f"stencil/{name}", src, bind, target, tmp_path, tol=1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    (c,) = [s for s in res.ir_intent.body if isinstance(s, Compute)]
    assert _selects(c.expr) <= 1, f"the staged pieces stayed apart: {c.expr}"


@pytest.mark.parametrize("name", ["int_r2_b128", "float_weighted_r2_b128"])
def test_port_has_nothing_above_a_note(name: str, tmp_path: Path) -> None:
    src, bind = CASES[name]
    res, _, _ = port_variant(f"stencil/{name}", src, bind, "nki", tmp_path, tol=1e-4)
    cu = tmp_path / f"{name}.cu"
    port = tmp_path / f"{name}_checked.py"
    port.write_text(res.source)
    binding = binding_from_dict({"kernel": "k", **bind}, path=str(cu))
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above
