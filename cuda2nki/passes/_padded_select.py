"""A guarded neighbour read whose other branch is not a literal, as a zero-padded read under
the kernel's select (see :mod:`cuda2nki.passes._window`).

``j > 1 ? x[j - 2] : inflow`` and ``j == 0 ? inflow : x[j - 1]`` pick a parameter (or any
value) where the neighbour is outside the tensor.  A padded window needs a literal pad, so the
read becomes ``select(c, x[j + s], 0)`` -- the zero-padded window, fetched only inside the
tensor -- and the kernel's select picks between it and the other branch as written:

Before::  select(index(j) == index(0), inflow, x[j - 1])
After::   select(index(j) == index(0), inflow, select(index(0) < index(j), x[j - 1], 0))

The inner test is the read's own guard: the select's test where the read is its first branch,
its negation where it is the second (``a < b`` negates to ``b < a + 1`` on integers, and
``j == 0`` to ``0 < j`` for an index, never negative).  Not a pass.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import Binary, Const, Expr, IndexValue, Lit, Read, Select, Sym
from cuda2nki.ir.ops import Op
from cuda2nki.passes._index import plus


def zero_padded(e: Select) -> tuple[Select, Select] | None:
    """(the zero-padded read, ``e`` with its read replaced by it), or None where neither
    branch is a read, the other branch is a literal already, or the test has no negation
    of the supported form."""
    if isinstance(e.a, Read) and not isinstance(e.b, Lit):
        inner = Select(e.cond, e.a, Lit(0.0, "float32"), loc=e.loc)
        return inner, Select(e.cond, inner, e.b, loc=e.loc)
    if isinstance(e.b, Read) and not isinstance(e.a, Read):
        cond = negated(e.cond)
        if cond is None:
            return None
        inner = Select(cond, e.b, Lit(0.0, "float32"), loc=e.loc)
        return inner, Select(e.cond, e.a, inner, loc=e.loc)
    return None


def negated(c: Expr) -> Expr | None:
    """The negation of an index test as ``<`` comparisons, or None."""
    if not (isinstance(c, Binary) and isinstance(c.a, IndexValue) and isinstance(c.b, IndexValue)):
        return None
    if c.op == Op.LT:
        bumped = IndexValue(plus(c.a.expr, Const(1)), c.a.dtype, loc=c.a.loc)
        return Binary(Op.LT, c.b, bumped, loc=c.loc)
    if c.op == Op.EQ:
        zero, index = (c.a, c.b) if c.a.expr == Const(0) else (c.b, c.a)
        if zero.expr == Const(0) and isinstance(index.expr, Sym):
            return Binary(Op.LT, zero, index, loc=c.loc)
    return None
