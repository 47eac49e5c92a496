"""guards-to-domains: an accumulating write whose points each own their element (per-row sums
added across blocks with atomics) is the element's old value combined with the expression;
writes that combine several points into one element keep accumulating."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline

HEAD = (
    "kernel k(x: in float32[R, C], w: in float32[R], out: inout float32[R], "
    "m: inout float32[R, C], R: int32, C: int32) {\n"
)


def _kernel(stmt: str):
    return parse(HEAD + f"  reduce: {stmt};\n}}\n", "k.ir")


def _run(before):
    return run_pipeline(before, parse_pipeline("guards-to-domains"), PassContext())


def _inputs():
    rng = np.random.default_rng(11)
    f = np.float32
    return {
        "x": rng.standard_normal((4, 6)).astype(f),
        "w": rng.standard_normal(4).astype(f),
        "out": rng.standard_normal(4).astype(f),
        "m": rng.standard_normal((4, 6)).astype(f),
    }


OWN = [
    "out[i] add= reduce(add, j < C: x[i, j] * w[i]) for i < R",
    "out[i] max= reduce(max, j < C: x[i, j]) for i < R",
    "m[i, j] add= x[i, j] * 2.0 for i < R, j < C",
]


@pytest.mark.parametrize("stmt", OWN)
def test_each_point_adds_into_its_own_element(stmt: str) -> None:
    before = _kernel(stmt)
    after = _run(before)
    assert all(c.accumulate is None for c in after.body)
    scalars = {"R": 4, "C": 6}
    want = evaluate(before, _inputs(), scalars)
    got = evaluate(after, _inputs(), scalars)
    for name in ("out", "m"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-6)


SHARED = [
    # every j of a row adds into the same element: a reduction the accumulation performs
    "out[i] add= x[i, j] for i < R, j < C",
    # one axis indexes both dims: the points are distinct but the index is not the axes
    "m[i, i] add= x[i, i] for i < R",
]


@pytest.mark.parametrize("stmt", SHARED)
def test_points_sharing_an_element_keep_accumulating(stmt: str) -> None:
    after = _run(_kernel(stmt))
    assert any(c.accumulate is not None for c in after.body)
