"""Byte dot products (``__dp4a``, ``__dp2a_lo`` / ``__dp2a_hi``) lifted as integer arithmetic
(:mod:`cuda2nki.lift.bytedots`): a loop accumulating them is a contraction a recogniser claims,
and integer row sums that fp32 could round are added in bytes (:mod:`cuda2nki.passes._int_sums`).
Every port is bit-exact against the SIMT interpreter over the whole 32-bit range; the
matrix-vector products pass ``check`` with nothing above a note (they stream their operands:
no tensor-engine finding)."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file
from tests.port.acceptance import port_variant, run_against_simt, tensor_param
from tests.port.test_literal_byte_dots import KERNELS as LITERAL_KERNELS
from tests.port.test_literal_byte_dots import _binding as literal_binding

_FULL = [-(2**31), 2**31 - 1]
_UFULL = [0, 2**32 - 1]

GEMV_DP4A = """
__global__ void k(const int* w, const int* x, float* y, float s, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int acc = 0;
    for (int c = 0; c < cols; ++c) acc = __dp4a(w[r * cols + c], x[c], acc);
    y[r] = s * (float)acc;
}
"""
DP4A_UNSIGNED_MAP = """
__global__ void k(const unsigned* w, const unsigned* x, unsigned* y, float s, int rows, int cols) {
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += blockDim.x * gridDim.x) {
        y[r] = __dp4a(x[r], w[r * cols + 1], w[r * cols]);
    }
}
"""
GEMV_DP2A = """
__global__ void k(const int* w, const int* x, int* y, float s, int rows, int cols) {
    int r = threadIdx.x + blockIdx.x * blockDim.x;
    if (r < rows) {
        int lo = 0, hi = 0;
        for (int c = 0; c < cols; ++c) {
            lo = __dp2a_lo(x[c], w[r * cols + c], lo);
            hi = __dp2a_hi(x[c], w[r * cols + c], hi);
        }
        y[r] = lo - hi;
    }
}
"""
INT_ROW_SUM = """
__global__ void k(const int* w, const int* x, int* y, float s, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        int t = 0;
        for (int c = 0; c < cols; ++c) t += w[r * cols + c];
        y[r] = t;
    }
}
"""


def _bind(block: int, dtype: str, out: str, src_name: str = "") -> dict:
    rng = _UFULL if dtype == "uint32" else _FULL
    return {
        "launch": {"grid": [f"ceil_div(rows, {block})"], "block": [block]},
        "params": {
            "w": tensor_param(["rows", "cols"], "in", dtype, rng),
            "x": tensor_param(["rows" if "map" in src_name else "cols"], "in", dtype, rng),
            "y": tensor_param(["rows"], "out", out),
            "s": 0.5,
            "rows": 200,
            "cols": 16,
        },
        "check": {"shapes": [{"rows": 200, "cols": 16}, {"rows": 65, "cols": 5}]},
    }


CASES = [
    ("gemv_dp4a", GEMV_DP4A, 64, "int32", "float32"),
    ("dp4a_unsigned_map", DP4A_UNSIGNED_MAP, 128, "uint32", "uint32"),
    ("gemv_dp2a", GEMV_DP2A, 96, "int32", "int32"),
    ("int_row_sum", INT_ROW_SUM, 128, "int32", "int32"),
]


@pytest.mark.parametrize(("name", "src", "block", "dtype", "out"), CASES, ids=[c[0] for c in CASES])
def test_byte_dots_are_recognised_and_exact(name, src, block, dtype, out, tmp_path) -> None:
    res, run, points = port_variant(
        f"dots/{name}", src, _bind(block, dtype, out, name), "nki", tmp_path
    )
    assert res.idiom == ("contract" if name.startswith("gemv") else res.idiom), res.idiom
    assert not res.literal
    assert len(points) >= 2 and not run.mismatches, run.mismatches


@pytest.mark.parametrize("name", ["gemv_dp4a", "gemv_dp2a"])
def test_byte_dot_gemv_passes_check(name, tmp_path) -> None:
    _, src, block, dtype, out = next(c for c in CASES if c[0] == name)
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **_bind(block, dtype, out)}, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None and not res.literal
    port = tmp_path / f"{name}_port.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel="k", seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above


#: the elementwise byte dots of the literal lowering's tests: now recognised, still bit-exact
MAPS = [k for k in LITERAL_KERNELS if "loop" not in k[0]]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "dtype", "src", "block", "grid"), MAPS, ids=[k[0] for k in MAPS])
def test_elementwise_byte_dots_are_recognised_and_exact(
    name, dtype, src, block, grid, target, tmp_path
) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict(literal_binding(dtype, block, grid), path=str(cu))
    res = port_file(cu, binding=binding, target=target)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches
