"""A row-wise computation run down the columns (an input taken with its axes swapped) is named as
a wrong reduction axis by a re-run of the kernel on the transposed input, whatever the port's
precision; an output the swap does not explain is left alone."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cuda2nki.fidelity import axisswap
from cuda2nki.fidelity.check import check

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(3)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _center(x: np.ndarray) -> np.ndarray:
    return (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-5)


def _kernel(op, name: str = "x"):
    """A row-wise kernel as the checker re-runs it: sizes from the scalars, one input."""

    def rerun(over: Mapping[str, Any], inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        x = inputs[name]
        assert x.shape == (over.get("rows", x.shape[0]), over.get("cols", x.shape[1]))
        return op(x.astype(np.float64))

    return rerun


@pytest.mark.parametrize("op", [_softmax, _center])
@pytest.mark.parametrize("shape", [(40, 7), (5, 5), (3, 200), (9, 1)])
def test_a_computation_down_the_columns_is_explained(op, shape) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    scalars = {"rows": shape[0], "cols": shape[1]}
    got = op(x.T.astype(np.float64)).T
    got = got.astype(np.float32).astype(np.float64)
    if op is _softmax:  # a bf16 port: within bf16 rounding of the swapped computation
        got = got * (1 + RNG.uniform(-(2**-8), 2**-8, got.shape))
    want = op(x.astype(np.float64))
    ev = axisswap.transposed_layout(
        got, want, {"x": x}, {"x": ("rows", "cols")}, scalars, _kernel(op)
    )
    if np.allclose(got, want, rtol=1e-2, atol=1e-3):
        return  # (a shape where both axes give the same result: nothing to explain)
    assert "wrong reduction axis" in ev and axisswap.layout_input(ev) == "x"


def test_errors_the_swap_does_not_explain_are_left_alone() -> None:
    x = RNG.standard_normal((30, 12)).astype(np.float32)
    want = _softmax(x.astype(np.float64))
    scalars = {"rows": 30, "cols": 12}
    for got in (want * 1.3, want + RNG.standard_normal(want.shape) * 1e-3, want[::-1]):
        ev = axisswap.transposed_layout(
            got, want, {"x": x}, {"x": ("rows", "cols")}, scalars, _kernel(_softmax)
        )
        assert ev == ""
    # sizes that are not plain scalars: no re-run is possible
    assert axisswap.swapped_sizes(("rows", "2 * cols"), scalars) is None
    assert axisswap.swapped_sizes(("rows", "cols"), scalars) == {"rows": 12, "cols": 30}
    assert axisswap.swapped_sizes(("n", "n"), {"n": 4}) == {}


def test_softmax_down_the_columns_is_not_called_precision() -> None:
    port = ROOT / "corpus/norm/ports/softmax_naive_flaw_wrong_axis.py"
    rep = check(ROOT / "corpus/norm/softmax_naive.cu", port, seeds=1, extra_points=False)
    assert rep.verdict == "fail"
    assert {n["classification"] for n in rep.numerics} == {"defect"}
    assert {n.get("mechanism") for n in rep.numerics} == {"wrong reduction axis"}
    assert "C2N4002" not in {f.code for f in rep.findings}  # no precision-loss finding
