"""split-flat: a flat index taken apart by / and % becomes a row axis and a column axis when the
divisor divides the extent, so per-row and per-column reads broadcast; otherwise it stays."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline

HEAD = (
    "kernel k(x: in float32[R * C], rs: in float32[R], cs: in float32[C], "
    "y: out float32[R * C], R: int32, C: int32, n: int32) {\n"
)


def _kernel(stmt: str):
    return parse(HEAD + f"  map: {stmt};\n}}\n", "k.ir")


def _run(before):
    return run_pipeline(before, parse_pipeline("split-flat"), PassContext())


def _inputs(r: int, c: int):
    rng = np.random.default_rng(7)
    f = np.float32
    return {
        "x": rng.standard_normal(r * c).astype(f),
        "rs": rng.standard_normal(r).astype(f),
        "cs": rng.standard_normal(c).astype(f),
    }


SPLIT = [
    "y[i] = x[i] * rs[i // C] + cs[i % C] for i < R * C",
    "y[i] = x[i] - cs[i % C] for i < C * R",  # the divisor first in the product
    "y[t] = rs[t // C] for t < R * C",  # only the row
]


@pytest.mark.parametrize("stmt", SPLIT)
def test_flat_axis_splits_into_row_and_column(stmt: str) -> None:
    before = _kernel(stmt)
    after = _run(before)
    c = after.body[0]
    assert len(c.domain.axes) == 2
    assert "Mod(" not in repr(c.expr) and "FloorDiv(" not in repr(c.expr)
    scalars = {"R": 5, "C": 7, "n": 35}
    want = evaluate(before, _inputs(5, 7), scalars)["y"]
    got = evaluate(after, _inputs(5, 7), scalars)["y"]
    np.testing.assert_array_equal(got, want)


KEPT = [
    # the extent is not a multiple of the row length as written
    "y[i] = x[i] * cs[i % C] for i < n",
    # two divisors: no single row length
    "y[i] = rs[i // C] + cs[i % R] for i < R * C",
    # one row: the flat layout is as good
    "y[i] = x[i] * cs[i % C] for i < C",
    # no / or %: a plain elementwise map
    "y[i] = x[i] * 2.0 for i < R * C",
]


@pytest.mark.parametrize("stmt", KEPT)
def test_other_flat_axes_stay(stmt: str) -> None:
    before = _kernel(stmt)
    assert _run(before) == before
