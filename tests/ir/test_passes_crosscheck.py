"""Cross-check of the pass pipeline through the IR: for each intent idiom the passes schedule, the
scheduled kernel verifies and, run by the tile evaluator, stays within the IR-derived error bound
of the intent evaluator.  Refusals are skipped (they are the pipeline's to make)."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError, Severity
from cuda2nki.ir.evaluate import analyse
from cuda2nki.ir.evaluate_tiles import evaluate_tiles
from cuda2nki.ir.verify import verify

from .kernels import ALL, kernel

DIMS = {"N": 300, "R": 130, "C": 70, "M": 150, "K": 200, "V": 12, "D": 5, "S": 4, "T": 6}
SCALARS = {"alpha": 1.5, "eps": 1e-5, "scale": 0.125, "B": 8}
KNOWN = {"TRIANGULAR": "the passes carry the extent 'i + 1' out of its domain (C2N2411)"}


def _case(name: str):
    k = kernel(name)
    rng = np.random.default_rng(3)
    inputs = {}
    for t in k.inputs:
        shape = tuple(DIMS[s.name] for s in t.shape)
        if t.dtype.startswith("int"):
            inputs[t.name] = rng.integers(0, DIMS["V"], size=shape).astype(t.dtype)
        else:
            inputs[t.name] = rng.standard_normal(shape).astype(np.float32)
    scalars = {**SCALARS, **{s: v for s, v in DIMS.items() if s in k.scalars}}
    return k, inputs, scalars


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN[n])) if n in KNOWN else n for n in ALL],
)
def test_scheduled_kernel_matches_intent(name):
    port_intent = pytest.importorskip("cuda2nki.pipeline").port_intent
    k, inputs, scalars = _case(name)
    try:
        scheduled, _, _ = port_intent(k)
    except DiagnosticError as exc:
        pytest.skip(f"refused: {exc.diagnostic.message}")
    errors = [d for d in verify(scheduled) if d.severity is Severity.ERROR]
    assert not errors, errors
    ref = analyse(k, inputs, scalars)
    got = evaluate_tiles(scheduled, inputs, scalars)
    for out, exact in ref.values.items():
        g = np.asarray(got[out], np.float64)
        with np.errstate(invalid="ignore"):
            diff = np.where(g == exact, 0.0, np.abs(g - exact))
        assert np.all(diff <= 2 * ref.bound[out] + 1e-30), (out, float(np.max(diff)))
