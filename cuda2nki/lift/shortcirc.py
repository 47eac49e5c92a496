"""C's short-circuit ``&&`` / ``||`` in branch conditions.

``if (i < n && keep[i] > 0.5f)`` reads ``keep[i]`` only where ``i < n`` holds.  The lift
evaluates a condition as one value over every thread of the rounded-up grid, so the right
side's load would run past the tensor.  Splitting the condition where memory is first read
keeps the index part an ordinary guard around the data part:

* ``if (a && b) X``          -> ``if (a) if (b) X``
* ``if (a && b) X else Y``   -> ``if (a) { if (b) X else Y } else Y``
* ``if (a || b) return;``    -> ``if (a) return; if (b) return;``

(``if (a && b) return;`` stays whole: the data part's loads are padded as in expressions.)

Each rewrite is exact in C (no operand has side effects that the split could reorder: the
operands before the split read no memory, and those after it are evaluated in the same order
as before, only under their guard).

Inside expressions (``v = (i < n && x[i] > 0) ? x[i] : 0``) the same holds at the value
level: :func:`guard_loads` makes each load of the guarded operand a padded load
``cond ? x[k] : 0``, the form the lift already restricts to the valid region.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V


def operands(e: A.Expr, op: str) -> list[A.Expr]:
    """The operands of a chain of ``op`` (``a && b && c`` -> ``[a, b, c]``), left to right."""
    if isinstance(e, A.Binary) and e.op == op:
        return operands(e.left, op) + operands(e.right, op)
    return [e]


def reads_memory(e: A.Expr) -> bool:
    """Whether evaluating ``e`` may read memory or call a function (conservatively)."""
    for n in walk(e):
        if isinstance(n, A.Index | A.Call):
            return True
        if isinstance(n, A.Unary) and n.op == "*":
            return True
        if isinstance(n, A.Member) and n.arrow:
            return True
    return False


def _chain(ops: list[A.Expr], op: str) -> A.Expr:
    out = ops[0]
    for x in ops[1:]:
        out = A.Binary(op=op, left=out, right=x, loc=x.loc, ty=x.ty)
    return out


def split(cond: A.Expr, op: str) -> tuple[A.Expr, A.Expr] | None:
    """``(head, tail)`` where ``cond`` is ``head op tail``, ``head`` the operands before the first
    one that reads memory; None when there is no such split (no memory read after a
    memory-free operand)."""
    ops = operands(cond, op)
    first = next((k for k, x in enumerate(ops) if reads_memory(x)), None)
    if first is None or first == 0:
        return None
    return _chain(ops[:first], op), _chain(ops[first:], op)


def _only_return(s: A.Stmt) -> bool:
    body = s.body if isinstance(s, A.Block) else (s,)
    return len(body) == 1 and isinstance(body[0], A.Return) and body[0].value is None


def _returns(s: A.If) -> bool:
    return any(isinstance(n, A.Return) for n in walk((s.then, s.else_)))


def rewrite_if(s: A.If) -> list[A.Stmt] | None:
    """The statements that replace ``s`` so that no memory is read before the index part of its
    condition is known to hold; None when ``s`` needs no rewrite."""
    both = split(s.cond, "&&")
    if both is not None and not _returns(s):  # a return under the data part would outlive it
        head, tail = both
        inner = A.If(cond=tail, then=s.then, else_=s.else_, loc=s.loc)
        return [A.If(cond=head, then=inner, else_=s.else_, loc=s.loc)]
    either = split(s.cond, "||")
    if either is not None and s.else_ is None and _only_return(s.then):
        head, tail = either
        return [A.If(cond=head, then=s.then, loc=s.loc), A.If(cond=tail, then=s.then, loc=s.loc)]
    return None


def guard_loads(e: V.DExpr, cond: af.Cond) -> V.DExpr:
    """``e`` with every memory load ``x[k]`` made ``cond ? x[k] : 0`` (C evaluates ``e`` only
    where ``cond`` holds, so the padding never reaches a result)."""
    pred = V.Pred("bool", cond)

    def fn(x: V.DExpr) -> V.DExpr | None:
        if isinstance(x, V.Load):
            return V.Select(x.dtype, pred, x, V.Const(x.dtype, 0))
        if isinstance(x, V.Select) and x.cond == pred and isinstance(x.then, V.Select):
            inner = x.then  # the load just padded under the same condition
            if inner.cond == pred and isinstance(inner.then, V.Load):
                return V.Select(x.dtype, pred, inner.then, x.else_)
        return None

    return V.transform(e, fn)


def implied_index(c: V.DExpr) -> af.Cond | None:
    """An index condition that holds wherever the data condition ``c`` does (``i < n`` for
    ``i < n && m[i] > 0``, and for ``!(i >= n || m[i] < 0)``); None when ``c`` implies none.
    A branch taken under ``c`` runs only there, so its stores and loads may assume it."""
    return _implied(c, True)


def _implied(c: V.DExpr, holds: bool) -> af.Cond | None:
    """An index condition that holds wherever ``c`` is ``holds`` (true or false): under
    negation ``&&`` and ``||`` trade places (De Morgan), so one walk serves both."""
    if isinstance(c, V.Pred):
        return c.cond if holds else c.cond.negate()
    if isinstance(c, V.Op) and c.op == "lnot":
        return _implied(c.args[0], not holds)
    if isinstance(c, V.Op) and c.op in ("land", "lor"):
        parts = [_implied(a, holds) for a in c.args]
        if (c.op == "land") == holds:  # every operand holds: any implied part is a fact
            known = [p for p in parts if p is not None]
            return af.conj(known) if known else None
        # one operand or another: a fact only when each implies one
        return None if any(p is None for p in parts) else af.disj(parts)
    return None
