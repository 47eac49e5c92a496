"""A flag raised by whichever thread sees something: ``if (v != w) clipped = 1;``.

Every thread whose condition holds stores the same value (a constant or a scalar parameter) to
one element; the others leave it.  Whichever writer wins, the element ends as that value if any
thread's condition held, else keeps its old value: ``flag = count(cond) > 0 ? c : flag``, a
count of the condition over the whole launch (a reduction the recognisers take) combined with
the old value.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.forwarding import StoreRec


@dataclasses.dataclass(frozen=True)
class AnyWriter:
    """The parts of ``flag = cond ? c : flag``."""

    cond: V.DExpr
    value: V.DExpr
    old: V.DExpr


def any_writer(st: StoreRec, index: Poly, value: V.DExpr, loops: tuple) -> AnyWriter | None:
    """The flag store ``st`` (a plain store of a value no thread tells apart to
    one element every thread names, under a condition on data), else None."""
    if st.accumulate is not None or index.atoms():
        return None
    if not isinstance(value, V.Select) or not isinstance(value.else_, V.Load):
        return None
    old = value.else_
    if old.tensor != st.tensor or old.index != index:
        return None
    if V.index_atoms(value.then) or not V.index_atoms(value.cond) and not _reads(value.cond):
        return None
    if any(isinstance(x, V.Load | V.SRead) for x in V.walk(value.then)):
        return None
    return AnyWriter(value.cond, value.then, old)


def counted(w: AnyWriter) -> V.DExpr:
    """1 where the thread writes, 0 elsewhere: summed over the launch, the writers."""
    return V.Select("int32", w.cond, V.Const("int32", 1), V.Const("int32", 0))


def raised(w: AnyWriter, writers: V.DExpr) -> V.DExpr:
    """The flag after the launch, given the number of ``writers``."""
    anyone = V.Op("bool", "gt", (writers, V.Const(writers.dtype, 0)))
    return V.Select(w.old.dtype, anyone, w.value, w.old)


def _reads(e: V.DExpr) -> bool:
    return any(isinstance(x, V.Load | V.SRead) for x in V.walk(e))


__all__ = ["AnyWriter", "any_writer", "counted", "raised"]
