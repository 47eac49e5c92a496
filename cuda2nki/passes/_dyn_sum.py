"""Indices that add a data-dependent offset to an affine base (not a pass).

A flat buffer read at ``probs[idx * V + targets[idx]]`` lifts to one index
``$(targets[i, j]) + V * j + T * V * i``: a sum of data-dependent terms (:class:`Dyn`) and an
affine part.  The element gather reads it as a flat element offset, like ``x[i, t[i]]`` on a
shaped tensor: :func:`dyn_terms` splits such a sum into its affine part and its data terms.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import Add, Const, Dyn, Expr, SizeExpr


def has_dyn(ix: SizeExpr) -> bool:
    """``ix`` is a data-dependent index or a sum with a data-dependent term."""
    if isinstance(ix, Dyn):
        return True
    return isinstance(ix, Add) and (has_dyn(ix.a) or has_dyn(ix.b))


def dyn_terms(ix: SizeExpr) -> tuple[SizeExpr, list[Expr]]:
    """``ix`` as (affine part, data-dependent values) whose sum it is; the data values are the
    :class:`Dyn` terms of a sum (a ``Dyn`` elsewhere in the index stays in the affine part)."""
    if isinstance(ix, Dyn):
        return Const(0), [ix.expr]
    if isinstance(ix, Add) and has_dyn(ix):
        fa, da = dyn_terms(ix.a)
        fb, db = dyn_terms(ix.b)
        fixed = fb if fa == Const(0) else fa if fb == Const(0) else fa + fb
        return fixed, da + db
    return ix, []
