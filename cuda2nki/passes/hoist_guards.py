"""``hoist-guards``: index guards nested in a statement's value move to its top (intent -> intent).

Before::  y[i] = 2 * select(index(i) < index(w), select(index(i) < index(w) && index(0) <
              index(w), x[i], x[w - 1]), 0)                                   for i < n
After::   y[i] = select(index(i) < index(w), 2 * x[i], 2 * 0)                 for i < n

A texture fetch lowers to such a value (``tex1Dfetch`` reads zero past the texture's width; a
clamped read first tests the coordinate against it), and so does any guarded read written
inside arithmetic (``2.0f * (i < m ? a[i] : 0.0f)``).  Lowered where it stands, the guarded read
still loads a whole tile of ``x`` -- past the end of ``x`` where ``x`` is shorter than the
domain, which the port cannot do.  Two rewrites make it a select at the top of the statement,
which ``guards-to-domains`` turns into a domain bounded by ``w``:

* a select whose test the guards around it imply is its first branch (``index(0) < index(w)``
  follows from ``index(i) < index(w)`` with ``i`` an axis, which is never negative);
* a value whose index-only guards are all one test ``c`` is ``select(c, v1, v0)``, with ``v1``
  (``v0``) the value with each such select replaced by its first (second) branch -- the same
  value, since a select is evaluated per element.

Statements that accumulate, and guards that read data, are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import (
    Binary,
    Cast,
    Compute,
    Const,
    Expr,
    IndexValue,
    Kernel,
    Lit,
    Param,
    Read,
    Select,
    Sym,
    Unary,
)
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import children, walk
from cuda2nki.passes.base import Pass, PassContext

#: the expressions of a value this pass rewrites through
_PLAIN = (Binary, Cast, Unary, Select, Read, Lit, IndexValue, Param)


@dataclass(frozen=True)
class HoistGuardsPass(Pass):
    name: ClassVar[str] = "hoist-guards"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        if kernel.is_scheduled:
            return kernel
        body = tuple(_hoisted(c) if isinstance(c, Compute) else c for c in kernel.body)
        return kernel if body == kernel.body else kernel.replace(body=body)


def _hoisted(c: Compute) -> Compute:
    if c.accumulate is not None or isinstance(c.expr, Select) or not _nested_guards(c.expr):
        return c
    if any(not isinstance(x, _PLAIN) for x in walk(c.expr)):  # reductions bind axes of their own
        return c
    axes = frozenset(c.domain.names)
    e = _simplified(c.expr, frozenset(), axes)
    conds = {s.cond for s in _guards(e)}
    if len(conds) != 1:
        return c if e == c.expr else c.replace(expr=e)
    (cond,) = conds
    taken = _branch(e, cond, True)
    other = _branch(e, cond, False)
    facts = frozenset(_conjuncts(cond))
    top = Select(cond, _simplified(taken, facts, axes), other, loc=c.expr.loc)
    return c.replace(expr=top)


def _nested_guards(e: Expr) -> bool:
    return any(isinstance(x, Select) and _index_only(x.cond) for x in walk(e))


def _index_only(e: Expr) -> bool:
    """A test of indices alone: comparisons and conjunctions of index values and literals."""
    for x in walk(e):
        if isinstance(x, Read):
            return False
        if not isinstance(x, Binary | IndexValue | Lit):
            return False
    return True


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == Op.LAND:
        return [*_conjuncts(e.a), *_conjuncts(e.b)]
    return [e]


def _implied(cond: Expr, facts: frozenset[Expr], axes: frozenset[str]) -> bool:
    return all(_holds(t, facts, axes) for t in _conjuncts(cond))


def _holds(term: Expr, facts: frozenset[Expr], axes: frozenset[str]) -> bool:
    """``term`` is a fact, or ``index(0) < index(E)`` beside a fact ``index(i) < index(E)``
    with ``i`` an axis (never negative)."""
    if term in facts:
        return True
    if not (isinstance(term, Binary) and term.op == Op.LT and isinstance(term.a, IndexValue)):
        return False
    if not (isinstance(term.a.expr, Const) and term.a.expr.value == 0):
        return False
    for f in facts:
        if isinstance(f, Binary) and f.op == Op.LT and f.b == term.b:
            low = f.a.expr if isinstance(f.a, IndexValue) else None
            if isinstance(low, Sym) and low.name in axes:
                return True
    return False


def _simplified(e: Expr, facts: frozenset[Expr], axes: frozenset[str]) -> Expr:
    """``e`` with each index-only select its surrounding guards imply replaced by its first
    branch."""
    if isinstance(e, Select) and _index_only(e.cond):
        if _implied(e.cond, facts, axes):
            return _simplified(e.a, facts, axes)
        inner = facts | frozenset(_conjuncts(e.cond))
        return dataclasses.replace(
            e, a=_simplified(e.a, inner, axes), b=_simplified(e.b, facts, axes)
        )
    return _map_children(e, lambda x: _simplified(x, facts, axes))


def _guards(e: Expr) -> list[Select]:
    """The outermost index-only selects of ``e``."""
    if isinstance(e, Select) and _index_only(e.cond):
        return [e]
    return [s for x in children(e) for s in _guards(x)]


def _branch(e: Expr, cond: Expr, first: bool) -> Expr:
    if isinstance(e, Select) and e.cond == cond:
        return _branch(e.a if first else e.b, cond, first)
    return _map_children(e, lambda x: _branch(x, cond, first))


def _map_children(e: Expr, fn: Callable[[Expr], Expr]) -> Expr:
    """``e`` with ``fn`` applied to each of its expression fields (a unary, binary, select or
    cast; the statements that hold other nodes are not rewritten)."""
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, Expr) and (new := fn(v)) is not v:
            changes[f.name] = new
    return dataclasses.replace(e, **changes) if changes else e
