"""``clamp-reads``: choices between a neighbour and the edge element become clamped reads
(scheduled layouts -> the same, before ``lower-tiles``).

Before::  t[i, j] = select(index(0) < index(i), x[i - 1, j], x[0, j]) + x[i, j]   (rows layout)
After::   t[i, j] = x[max(i - 1, 0), j] + x[i, j]

A select whose condition is known to hold on every point of a non-empty domain
(``index(0) < index(n)`` with an axis ``i < n``: the ``min(max(i - 1, 0), n - 1)`` spelling's
outer test) is its first branch.  Statements on the rows layout only: its lowering loads a
clamped read as one tile per tap (see :mod:`cuda2nki.passes._clamp`); on the others the select
stays as it is (``guards-to-domains`` keeps the selects of a 2-D statement for this pass).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import Binary, Compute, Const, Expr, Kernel, Reduce, Select
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import attrs
from cuda2nki.passes._clamp import _operand, _zero, clamped_read
from cuda2nki.passes.base import Pass, PassContext


@dataclass(frozen=True)
class ClampReadsPass(Pass):
    name: ClassVar[str] = "clamp-reads"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        if kernel.is_scheduled:
            return kernel
        body = tuple(_clamp(c) if isinstance(c, Compute) else c for c in kernel.body)
        return kernel if body == kernel.body else kernel.replace(body=body)


def _clamp(c: Compute) -> Compute:
    if attrs(c).get("layout") != "rows":
        return c
    extents = {a.name: a.extent for a in c.domain.axes}
    expr = rewrite(c.expr, extents)
    return c if expr is c.expr else c.replace(expr=expr)


def rewrite(e: Expr, extents: dict) -> Expr:
    """``e`` with its clamp-shaped selects (outside reductions) as clamped reads."""
    if isinstance(e, Reduce):
        return e
    kw = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, Expr):
            r = rewrite(v, extents)
            if r is not v:
                kw[f.name] = r
    if kw:
        e = dataclasses.replace(e, **kw)
    if not isinstance(e, Select):
        return e
    if _holds_where_nonempty(e.cond, extents):
        return e.a
    got = clamped_read(e, extents)
    return e if got is None else got


def _holds_where_nonempty(cond: Expr, extents: dict) -> bool:
    """``0 < n`` (``1 <= n``) where ``n`` is the extent of one of the domain's axes."""
    if not (isinstance(cond, Binary) and cond.op in (Op.LT, Op.LE)):
        return False
    a, b = _operand(cond.a), _operand(cond.b)
    if a is None or b is None:
        return False
    floor = a if cond.op == Op.LT else a - Const(1)
    return _zero(floor) and any(_zero(b - n) for n in extents.values())
