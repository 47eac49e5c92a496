"""What an atomic that a thread does not make contributes: its op's identity in the element type.

``if (v > t) atomicAdd(&count, 1)`` and ``if (ok) atomicMax(&best, v)`` are atomics under a
condition on data.  Where the condition is false the thread adds 0, or takes the maximum with the
smallest value of the type, which changes nothing: the atomic becomes an unconditional one of
``cond ? v : identity``, a reduction over the grid that the recognisers take.
"""

from __future__ import annotations

from cuda2nki.lift import values as V
from cuda2nki.lift.symbase import is_float_dtype

#: the least and greatest value of each integer element type an atomic may update
_INT_RANGE = {
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}


def atomic_identity(op: str | None, dtype: str) -> V.Const | None:
    """The value an atomic ``op`` (``add``/``max``/``min``) combines without effect on ``dtype``
    elements; None for a plain store or an op or type without one."""
    if op == "add":
        return V.Const(dtype, 0)
    if op not in ("max", "min"):
        return None
    if is_float_dtype(dtype):
        return V.Const(dtype, float("-inf") if op == "max" else float("inf"))
    bounds = _INT_RANGE.get(dtype)
    if bounds is None:
        return None
    return V.Const(dtype, bounds[0] if op == "max" else bounds[1])


__all__ = ["atomic_identity"]
