"""guards-to-domains writes the other arm of an index-bounded select on the edge pieces only
(rows below and above the interior), not everywhere before the interior overwrites it: the edge
row of a tensor is one row of traffic, and what only the edge reads is loaded once."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.nodes import Compute
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline

HEAD = (
    "kernel k(x: in float32[R, C], w: in float32[6], y: {role} float32[R, C], R: int32, "
    "C: int32) {{\n"
)

#: (statement, rows the edge pieces write at R = 9)
EDGE_ROWS = [
    # the last row pinned (the branch on the thread's row, as a select)
    ("y[i, j] = select(index(1 + i) != index(R), x[i, j] + x[1 + i, j], w[2]) for i < R, j < C", 1),
    ("y[r, c] = select(index(r) < index(R - 1), x[r, c] * 2.0, w[0]) for r < R, c < C", 1),
    # the first row, and the first two
    ("y[i, j] = select(index(i) >= index(1), x[i - 1, j], w[1]) for i < R, j < C", 1),
    ("y[i, j] = select(index(i) > index(1), x[i - 2, j], x[i, j]) for i < R, j < C", 2),
    # both ends
    (
        "y[i, j] = select(index(i) >= index(1) && index(i) < index(R - 1), "
        "x[i - 1, j] + x[i + 1, j], w[3]) for i < R, j < C",
        2,
    ),
    # an equality on the edge row (flipped to its complement first)
    ("y[i, j] = select(index(i) == index(R - 1), w[4], x[i + 1, j]) for i < R, j < C", 1),
]


def _kernel(stmt: str, role: str = "out"):
    return parse(HEAD.format(role=role) + f"  stencil: {stmt};\n}}\n", "k.ir")


def _g2d(kernel):
    return run_pipeline(kernel, parse_pipeline("guards-to-domains"), PassContext())


def _rows(c: Compute, r: int) -> int:
    env = {"R": r, "C": 5}
    return int(c.domain.axes[0].extent.evaluate(env))


def _inputs(r: int, c: int = 5) -> dict:
    rng = np.random.default_rng(r)
    return {
        "x": rng.standard_normal((r, c)).astype(np.float32),
        "w": rng.standard_normal(6).astype(np.float32),
        "y": rng.standard_normal((r, c)).astype(np.float32),
    }


@pytest.mark.parametrize(("stmt", "edge"), EDGE_ROWS)
@pytest.mark.parametrize("role", ["out", "inout"])
def test_the_other_arm_writes_the_edge_rows_only(stmt: str, edge: int, role: str) -> None:
    before = _kernel(stmt, role)
    after = _g2d(before)
    writes = [c for c in after.body if isinstance(c, Compute)]
    # every element written once: no copy of the old values, no write the interior overwrites
    assert sum(_rows(c, 9) for c in writes) == 9, after
    assert min(_rows(c, 9) for c in writes) <= edge
    for r in (9, 2, 1):
        got = evaluate(after, _inputs(r))["y"]
        np.testing.assert_array_equal(got, evaluate(before, _inputs(r))["y"])


def test_a_bound_on_the_contiguous_axis_keeps_the_whole_write() -> None:
    # edge columns would move one element per partition row: written whole, then overwritten
    stmt = "y[i, j] = select(index(j) >= index(1), x[i, j - 1], w[1]) for i < R, j < C"
    after = _g2d(_kernel(stmt))
    writes = [c for c in after.body if isinstance(c, Compute)]
    assert len(writes) == 2 and writes[0].domain.axes[1].extent.evaluate({"R": 9, "C": 5}) == 5


def test_a_one_dimensional_edge_keeps_the_whole_write() -> None:
    # the edge of a 1-D tensor is one element: a tile program of its own would cost more
    head = "kernel k(x: in float32[N], w: in float32[6], y: out float32[N], N: int32) {\n"
    stmt = "y[i] = select(index(i) != index(0), x[i] - x[i - 1], w[2]) for i < N"
    after = _g2d(parse(head + f"  stencil: {stmt};\n}}\n", "k.ir"))
    writes = [c for c in after.body if isinstance(c, Compute)]
    assert len(writes) == 2 and writes[0].domain.axes[0].extent.evaluate({"N": 9}) == 9


@pytest.mark.parametrize(
    "stmt",
    [
        "y[i] = select(index(i) < index(1), w[2], x[i] - x[i - 1]) for i < N",
        "y[k] = select(index(k) >= index(N - 2), w[0], x[k + 2]) for k < N",
        "y[i] = select(index(i + 1) < index(N), w[3], x[i - 1] * 2.0) for i < N",
    ],
)
def test_a_one_dimensional_edge_that_reads_a_neighbour_is_written_in_pieces(stmt: str) -> None:
    # written everywhere, the edge arm would read outside x on the interior
    head = "kernel k(x: in float32[N], w: in float32[6], y: out float32[N], N: int32) {\n"
    before = parse(head + f"  stencil: {stmt};\n}}\n", "k.ir")
    after = _g2d(before)
    writes = [c for c in after.body if isinstance(c, Compute)]
    assert all(c.domain.axes[0].extent.evaluate({"N": 9}) < 9 for c in writes), writes
    x = np.arange(9, dtype=np.float32) * 1.5 + 1
    w = np.arange(6, dtype=np.float32) + 0.5
    inputs = {"x": x, "w": w, "N": 9}
    np.testing.assert_array_equal(evaluate(after, inputs)["y"], evaluate(before, inputs)["y"])
