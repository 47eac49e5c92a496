"""Reductions masked by a condition on data: ``reduce(add, j < n: 1; where x[j] > t)``.

A counter bumped under a data condition (``if (x[i] > t) atomicAdd(&count, 1)``) or a maximum
taken only where a value passes a test lifts to a reduction whose ``where`` reads data.  It is
the plain reduction of ``where ? body : identity``: the mask is a compare of the tile the
condition reads, the identity (0 for a sum, -inf for a maximum) is selected where it is off, so
the reduction is exact.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import Binary, Expr, Lit, Reduce, Select
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import index_only, reductions

#: reduction ops whose identity a select can stand in for an element that is masked off
_MASKABLE = (Op.ADD, Op.MAX, Op.MIN)


def data_mask_ok(r: Reduce) -> bool:
    """Whether ``r``'s mask reads data and can become a select of the op's identity: the mask
    holds no reduction of its own (a condition on one element per position) and no condition
    on positions alone (``index(i) < n && x[i] > 0`` over a domain padded to whole blocks: the
    reads past ``n`` are then left to the flat guard, which pads them)."""
    if r.where is None or r.op not in _MASKABLE or reductions(r.where):
        return False
    return not any(index_only(c) for c in _conjuncts(r.where))


def masked_body(r: Reduce) -> Expr:
    """``r``'s body where its mask holds, the op's identity elsewhere; the mask's conditions
    on positions alone (a causal row) select outermost:
    ``index(j) <= index(i) ? (x[j] > 0 ? x[j] : 0) : 0``."""
    ident = Lit(float(r.op.info.identity), "float32")
    parts = _conjuncts(r.where)
    where = [c for c in parts if index_only(c)]
    data = [c for c in parts if not index_only(c)]
    body = r.body
    if data:
        body = Select(_conj(data), body, ident, loc=r.loc)
    if where:
        body = Select(_conj(where), body, ident, loc=r.loc)
    return body


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == Op.LAND:
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


def _conj(parts: list[Expr]) -> Expr:
    out = parts[0]
    for c in parts[1:]:
        out = Binary(Op.LAND, out, c, loc=c.loc)
    return out


__all__ = ["data_mask_ok", "masked_body"]
