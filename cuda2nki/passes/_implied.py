"""Guards a reduction's mask already implies (not a pass).

An unrolled grid-stride loop (``for (i = t; i < n; i += S * U) for (u < U) s += i + u*S < n ?
x[i + u*S] : 0``) lifts to reductions over the loop's trips masked by the trip's first position,
``where index(A) < n``, whose bodies test a later position of the same trip,
``select(index(A + d) < n, x[A + d], 0)`` with ``d >= 0``. The select's test implies the mask (a
later position inside the tensor means the first one is), so the mask can go: what is left is a
padded load of the row tile.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Add,
    Binary,
    CeilDiv,
    Const,
    FloorDiv,
    IndexValue,
    Lit,
    Max,
    Min,
    Mul,
    Reduce,
    Select,
    SizeExpr,
    Sym,
)
from cuda2nki.ir.ops import Op
from cuda2nki.passes._index import linear


def drop_implied_where(r: Reduce, axes: frozenset[str], signed: frozenset[str]) -> Reduce:
    """``r`` without its ``where`` when its (add) body is a select of zero whose test implies it;
    ``axes``: the index names that move (tile and loop axes); ``signed``: the scalar parameters
    that may be negative (every other name is a size or an axis position, never negative)."""
    if r.where is None or r.op != Op.ADD or not isinstance(r.body, Select):
        return r
    sel = r.body
    if not (isinstance(sel.b, Lit) and sel.b.value == 0):
        return r
    outer, inner = _bound(r.where), _bound(sel.cond)
    if outer is None or inner is None or outer[1] != inner[1]:
        return r
    names = axes | {a.name for a in r.axes}
    lo, hi = linear(outer[0], names), linear(inner[0], names)
    if (
        lo is None
        or hi is None
        or {k: v for k, v in lo.items() if k} != {k: v for k, v in hi.items() if k}
    ):
        return r
    d0, d1 = lo.get(None, Const(0)), hi.get(None, Const(0))
    if not _at_most(d0, d1, signed):
        return r
    return r.replace(where=None)


def _bound(e) -> tuple[SizeExpr, object] | None:
    """``index(A) < n``: (A, n)."""
    if isinstance(e, Binary) and e.op == Op.LT and isinstance(e.a, IndexValue):
        return e.a.expr, e.b
    return None


def _at_most(a: SizeExpr, b: SizeExpr, signed: frozenset[str]) -> bool:
    """``a <= b`` for every value of the sizes: ``b`` is ``a`` plus a sum of terms that are never
    negative (``a`` is usually 0)."""
    terms = _terms(b)
    rest = list(terms)
    for t in _terms(a):
        if t in rest:
            rest.remove(t)
        elif not (isinstance(t, Const) and t.value <= 0):
            return False
    return all(_nonneg(t, signed) for t in rest)


def _terms(e: SizeExpr) -> list[SizeExpr]:
    if isinstance(e, Add):
        return _terms(e.a) + _terms(e.b)
    if isinstance(e, Const) and e.value == 0:
        return []
    return [e]


def _nonneg(e: SizeExpr, signed: frozenset[str]) -> bool:
    """Never negative: constants >= 0, names not in ``signed``, and sums, products, quotients,
    minima and maxima of such."""
    if isinstance(e, Const):
        return e.value >= 0
    if isinstance(e, Sym):
        return e.name not in signed
    if isinstance(e, Add | Mul | FloorDiv | CeilDiv | Min):
        return _nonneg(e.a, signed) and _nonneg(e.b, signed)
    if isinstance(e, Max):
        return _nonneg(e.a, signed) or _nonneg(e.b, signed)
    return False
