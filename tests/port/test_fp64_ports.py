"""float64 kernels port in fp32 (NKI has no fp64), with warning C2N2516 naming the tensors.

Each spelling -- ``double*`` parameters, ``double`` scalars, a typedef, a ``double``
accumulator and literals, ``size_t`` grid-stride loops -- ports through its recogniser on
both targets and matches the CUDA kernel (run in fp64) at fp32 accuracy; a kernel that no
recogniser claims ports literally in fp32 the same way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.demote import demoted, uses_fp64
from tests.port.acceptance import grid_binding, port_variant, tensor_param

TRANSPOSE = """
__global__ void k(const double* a, double* b, int n) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < n && c < n) b[c * n + r] = a[r * n + c];
}
"""

SCALE_TYPEDEF = """
typedef double real;
__global__ void k(const real* x, real* y, real s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = s * x[i] + 0.1;
}
"""

ROWSUM = """
__global__ void k(const double* x, double* y, int n, int m) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i >= n) return;
    double acc = 0.0;
    for (int j = 0; j < m; ++j) acc += x[i * m + j] * 0.5;
    y[i] = acc;
}
"""

# a data-dependent loop: no recogniser claims it, the literal lowering ports it
HALVINGS = """
__global__ void k(const double* x, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    int steps = 0;
    while (v > 0.5 && steps < 8) { v = v * 0.5 + 0.125; steps++; }
    y[i] = v + steps;
}
"""


def _map_binding(extra: dict | None = None) -> dict:
    params = {
        "x": tensor_param(["n"], "in", "float64"),
        "y": tensor_param(["n"], "out", "float64"),
        "n": 1000,
        **(extra or {}),
    }
    return grid_binding(["ceil_div(n, 128)"], params, [{"n": 300}, {"n": 129}])


CASES = {
    "transpose": (
        TRANSPOSE,
        {
            "launch": {"grid": ["ceil_div(n, 16)", "ceil_div(n, 16)"], "block": [16, 16]},
            "params": {
                "a": tensor_param(["n", "n"], "in", "float64"),
                "b": tensor_param(["n", "n"], "out", "float64"),
                "n": 64,
            },
            "check": {"shapes": [{"n": 130}, {"n": 33}]},
        },
        "transpose",
    ),
    "scale_typedef": (SCALE_TYPEDEF, _map_binding({"s": -1.75}), "map"),
    "rowsum": (
        ROWSUM,
        grid_binding(
            ["ceil_div(n, 128)"],
            {
                "x": tensor_param(["n", "m"], "in", "float64"),
                "y": tensor_param(["n"], "out", "float64"),
                "n": 200,
                "m": 64,
            },
            [{"n": 129, "m": 257}, {"n": 7, "m": 3}],
        ),
        "reduce",
    ),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fp64_kernel_ports_through_its_recogniser_in_fp32(case, target, tmp_path) -> None:
    src, binding, idiom = CASES[case]
    res, run, points = port_variant(f"fp64/{case}", src, binding, target, tmp_path, tol=2e-5)
    assert not res.literal and res.idiom == idiom, res.diagnostics
    assert len(points) >= 2 and not run.mismatches, run.mismatches
    warn = [d for d in res.diagnostics if d.code == "C2N2516"]
    assert len(warn) == 1 and warn[0].severity.name == "WARNING"
    assert "float64 tensors" in warn[0].message and "6e-08" in warn[0].message
    # no note claims the port accumulates "as the CUDA kernel did"
    assert not [d for d in res.diagnostics if d.code == "C2N2510"]
    assert "float64" not in res.source.split("import", 1)[1]  # the port's own code is fp32
    assert "float64 in CUDA:" in res.source  # the header says what changed


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_fp64_kernel_no_recogniser_claims_ports_literally(target, tmp_path) -> None:
    res, run, points = port_variant(
        "fp64/halvings", HALVINGS, _map_binding(), target, tmp_path, tol=1e-5, literal_ok=True
    )
    assert len(points) >= 2 and not run.mismatches, run.mismatches
    assert "C2N2516" in [d.code for d in res.diagnostics]


def test_forced_literal_lowering_ports_fp64(tmp_path) -> None:
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file

    cu = tmp_path / "t.cu"
    cu.write_text(TRANSPOSE)
    binding = binding_from_dict({"kernel": "k", **CASES["transpose"][1]}, path=str(cu))
    res = port_file(cu, binding=binding, lowering="literal")
    assert res.source is not None and res.literal, res.diagnostics
    codes = [d.code for d in res.diagnostics]
    assert "C2N2516" in codes and "C2N2301" not in codes


def test_demoted_unit_replaces_every_double() -> None:
    tu = parse_source(SCALE_TYPEDEF + ROWSUM.replace("void k(", "void k2("), "t.cu")
    fn = tu.function("k")
    assert uses_fp64(fn)
    low = demoted(tu)
    assert not any(uses_fp64(f) for f in low.functions)
    params = {p.name: p.ty for p in low.function("k").params}
    assert params["x"].pointee.name == "float32" and params["s"].name == "float32"
    assert params["n"].name == "int32"  # integers are left alone
    lits = _float_lits(low.function("k"))
    assert lits and all(v == float(np.float32(v)) for v in lits)
    assert 0.1 not in lits and float(np.float32(0.1)) in lits


def test_float_kernel_is_left_alone() -> None:
    tu = parse_source(TRANSPOSE.replace("double", "float"), "t.cu")
    assert not uses_fp64(tu.function("k"))
    assert demoted(tu).function("k") is tu.function("k")


def _float_lits(node) -> list[float]:
    import dataclasses

    out: list[float] = []
    if isinstance(node, A.FloatLit):
        out.append(node.value)
    if isinstance(node, tuple):
        for n in node:
            out.extend(_float_lits(n))
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.name != "loc":
                out.extend(_float_lits(getattr(node, f.name)))
    return out


def test_dot_double_corpus_kernel_ports() -> None:
    from cuda2nki import api

    path = Path(__file__).resolve().parents[2] / "corpus/reduce/dot_double.cu"
    res = api.port(path)
    assert res.source is not None and not res.literal, res.diagnostics
    assert "C2N2516" in [d.code for d in res.diagnostics]
