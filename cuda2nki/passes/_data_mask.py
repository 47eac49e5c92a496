"""Reductions masked by a condition on data: ``reduce(add, j < n: 1; where x[j] > t)``.

A counter bumped under a data condition (``if (x[i] > t) atomicAdd(&count, 1)``) or a maximum
taken only where a value passes a test lifts to a reduction whose ``where`` reads data.  It is
the plain reduction of ``where ? body : identity``: the mask is a compare of the tile the
condition reads, the identity (0 for a sum, -inf for a maximum) is selected where it is off, so
the reduction is exact.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import Reduce
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import reductions

#: reduction ops whose identity a select can stand in for an element that is masked off
_MASKABLE = (Op.ADD, Op.MAX, Op.MIN)


def data_mask_ok(r: Reduce) -> bool:
    """Whether ``r``'s mask reads data and can become a select of the op's identity: the mask
    holds no reduction of its own (a condition on one element per position)."""
    return r.where is not None and r.op in _MASKABLE and not reductions(r.where)


__all__ = ["data_mask_ok"]
