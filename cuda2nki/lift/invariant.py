"""Folds whose body does not vary along the folded variable.

``atomicAdd(counter, 1)`` by every thread of a launch lifts to a sum of a constant over the
launch's coordinates: that is the constant times the number of terms (an add), or the constant
itself (a maximum or minimum over a non-empty range).  Written out this way the count carries
the launch domain into the port as a number, not as a reduction with nothing to reduce."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V

_PLAIN = (V.Const, V.Scalar, V.IntVal, V.Pred, V.Load, V.Op, V.Select, V.Cast)
_INT = ("int32", "uint32", "int64", "uint64", "int16", "uint16", "int8", "uint8")


def collapse(e: V.DExpr) -> V.DExpr:
    """``e`` with every invariant Fold (add, max, min; start 0, step 1) written as its value."""
    return V.transform(e, _collapse1)


def _collapse1(e: V.DExpr) -> V.DExpr | None:
    if not isinstance(e, V.Fold) or e.start != af.ZERO or e.step != af.ONE:
        return None
    body = e.body
    if not _invariant(body, e.var):
        return None
    if e.op in ("max", "min"):
        # a non-empty range at every launch (its extent is a launch or loop count >= 1)
        return body if e.stop.is_const and e.stop.const_value > 0 else None
    if e.op != "add":
        return None
    count: V.DExpr = V.IntVal("int32", e.stop)
    if e.dtype not in _INT:
        count = V.Cast(e.dtype, count)
    if isinstance(body, V.Const) and body.value == 1:
        return count
    return V.Op(e.dtype, "mul", (body, count))


def _invariant(body: V.DExpr, var: str) -> bool:
    if any(not isinstance(n, _PLAIN) for n in V.walk(body)):
        return False
    return var not in V.index_atoms(body)
