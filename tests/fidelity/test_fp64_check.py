"""``check`` of a port of a float64 kernel (computed in fp32, NKI has no fp64).

The CUDA kernel runs in fp64; the port gets the inputs as float32 and returns float32 outputs,
which are not a dtype mismatch.  The tolerance is fp32 arithmetic's (the IR bound of the fp32
twin), and an output that keeps fewer than four digits of the fp64 result is C2N4030 -- the
case where fp32 is genuinely not enough, however faithful the port.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.fidelity.check import check
from cuda2nki.fp64 import FP32_ENOUGH_RTOL, fp32_shortfall
from cuda2nki.pipeline import port_file

TRANSPOSE = """
__global__ void t64(const double* a, double* b, int n) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < n && c < n) b[c * n + r] = a[r * n + c];
}
"""

# exact in double for |x| << big; in fp32 the sum rounds x away almost entirely
CANCEL = """
__global__ void c64(const double* x, double* y, double big, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (x[i] + big) - big;
}
"""

# the same subtraction, well conditioned: fp32 keeps about seven digits
SHIFT = CANCEL.replace("c64", "s64").replace("(x[i] + big) - big", "(x[i] + big) - 0.5 * big")


def _bind(name: str, cu: Path, params: dict, grid: list, block: list, shapes: list) -> object:
    return binding_from_dict(
        {
            "kernel": name,
            "launch": {"grid": grid, "block": block},
            "params": params,
            "check": {"shapes": shapes},
        },
        path=str(cu),
    )


def _ported(tmp: Path, name: str, src: str, binding, target: str = "nki", **kw) -> Path:
    cu = tmp / f"{name}.cu"
    res = port_file(cu, binding=binding, target=target, **kw)
    assert res.source is not None, res.diagnostics
    port = tmp / f"{name}_{target}.py"
    port.write_text(res.source)
    return port


def _map(tmp: Path, name: str, src: str, big: float) -> tuple[Path, object]:
    cu = tmp / f"{name}.cu"
    cu.write_text(src)
    b = _bind(
        name,
        cu,
        {
            "x": {"shape": ["n"], "dtype": "float64", "role": "in"},
            "y": {"shape": ["n"], "dtype": "float64", "role": "out"},
            "big": big,
            "n": 300,
        },
        ["ceil_div(n, 128)"],
        [128],
        [{"n": 129}],
    )
    return cu, b


def _codes(rep) -> list[str]:
    return [f.code for f in rep.findings]


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_faithful_fp64_port_passes_with_an_fp32_bound(tmp_path, target) -> None:
    cu = tmp_path / "t64.cu"
    cu.write_text(TRANSPOSE)
    b = _bind(
        "t64",
        cu,
        {
            "a": {"shape": ["n", "n"], "dtype": "float64", "role": "in"},
            "b": {"shape": ["n", "n"], "dtype": "float64", "role": "out"},
            "n": 40,
        },
        ["ceil_div(n, 16)", "ceil_div(n, 16)"],
        [16, 16],
        [{"n": 129}],
    )
    port = _ported(tmp_path, "t64", TRANSPOSE, b, target)
    rep = check(cu, port, binding=b, seeds=1, extra_points=False)
    assert rep.verdict == "pass", [f.message for f in rep.findings]
    assert rep.tolerance_source == "ir"
    assert "C2N4021" not in _codes(rep) and "C2N4030" not in _codes(rep)


def test_fp32_not_enough_is_reported(tmp_path) -> None:
    cu, b = _map(tmp_path, "c64", CANCEL, 1.0e8)
    port = _ported(tmp_path, "c64", CANCEL, b)
    rep = check(cu, port, binding=b, seeds=1, extra_points=False)
    assert rep.verdict == "fail"
    lost = [f for f in rep.findings if f.code == "C2N4030"]
    assert len(lost) == 1, [f.message for f in rep.findings]
    assert "output 'y'" in lost[0].message and "fewer than four digits" in lost[0].message
    # the port is faithful: the loss is fp32's, said as such, and not a numeric defect
    assert "within the error bound of fp32 arithmetic" in lost[0].message
    assert all(n.get("classification") != "defect" for n in rep.numerics), rep.numerics


def test_well_conditioned_twin_passes(tmp_path) -> None:
    cu, b = _map(tmp_path, "s64", SHIFT, 4.0)
    port = _ported(tmp_path, "s64", SHIFT, b)
    rep = check(cu, port, binding=b, seeds=1, extra_points=False)
    assert rep.verdict == "pass", [f.message for f in rep.findings]
    assert "C2N4030" not in _codes(rep)


def test_wrong_fp64_port_is_a_defect_not_precision(tmp_path) -> None:
    cu, b = _map(tmp_path, "s64", SHIFT, 4.0)
    port = _ported(tmp_path, "s64", SHIFT, b)
    text = port.read_text()
    bad = text.replace("value=0.5)", "value=0.501)")  # the port's constant 0.5 * big, changed
    assert bad != text
    port.write_text(bad)
    rep = check(cu, port, binding=b, seeds=1, extra_points=False)
    assert rep.verdict == "fail"
    assert "C2N4030" not in _codes(rep)
    assert any(n.get("classification") == "defect" for n in rep.numerics), rep.numerics


def test_literal_fp64_port_checks(tmp_path) -> None:
    cu, b = _map(tmp_path, "s64", SHIFT, 4.0)
    port = _ported(tmp_path, "s64", SHIFT, b, lowering="literal")
    rep = check(cu, port, binding=b, seeds=1, extra_points=False)
    assert rep.verdict == "pass", [f.message for f in rep.findings]


def test_shortfall_measures_against_the_output_magnitude() -> None:
    e = np.array([1.0, 2.0, -3.0, 0.0, 5.0])
    assert fp32_shortfall(e.astype(np.float32), e) is None
    # an element that cancels to zero is measured against the output's median magnitude
    g = e.copy()
    g[3] = 0.5 * FP32_ENOUGH_RTOL * 2.5
    assert fp32_shortfall(g, e) is None
    g[3] = 2.0 * FP32_ENOUGH_RTOL * 3.0
    short = fp32_shortfall(g, e)
    assert short is not None and short[:2] == (1, 5) and short[3] == 0.0
    # elements no CUDA thread writes are not judged
    assert fp32_shortfall(g, e, dont_care=np.array([0, 0, 0, 1, 0], bool)) is None
