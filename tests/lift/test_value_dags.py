"""Lifted values are DAGs: a warp's shuffle ladder or an online (max, sum) recurrence reads each
step's value several times, so the tree a value unfolds to doubles with every step.  Walks,
rewrites and the binding inference's load scan visit each distinct node once (an online softmax
with a shuffle ladder once took minutes to port)."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.infer import _loads_in

DEPTH = 18  # 2**18 paths: a walk of the unfolded tree takes seconds and fails the counts


def _ladder(depth: int = DEPTH) -> tuple[V.DExpr, V.Load]:
    """x_{k+1} = select(x_k > c, x_k * x_k, x_k + c): every step reads x_k twice or more."""
    ld = V.Load("float32", "inp", af.sym("i"))
    x: V.DExpr = ld
    for k in range(depth):
        c = V.Const("float32", float(k))
        x = V.Select(
            "float32",
            V.Op("bool", "gt", (x, c)),
            V.Op("float32", "mul", (x, x)),
            V.Op("float32", "add", (x, c)),
        )
    return x, ld


def test_walk_visits_each_node_once() -> None:
    x, ld = _ladder()
    nodes = list(V.walk(x))
    assert len(nodes) == len({id(n) for n in nodes})
    assert len(nodes) < 10 * DEPTH
    assert sum(n is ld for n in nodes) == 1


def test_transform_rewrites_a_shared_node_once() -> None:
    x, _ = _ladder()
    calls = []

    def fn(n: V.DExpr) -> V.DExpr | None:
        calls.append(n)
        if isinstance(n, V.Load):
            return V.Load(n.dtype, "renamed", n.index)
        return None

    out = V.transform(x, fn)
    assert len(calls) < 10 * DEPTH
    loads = [n for n in V.walk(out) if isinstance(n, V.Load)]
    assert [n.tensor for n in loads] == ["renamed"]


def test_the_inference_scans_a_shared_load_once() -> None:
    x, ld = _ladder()
    got = list(_loads_in(x, ()))
    assert got == [(ld, ())]
