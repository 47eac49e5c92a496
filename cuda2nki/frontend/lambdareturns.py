"""Early ``return`` in an inlined lambda (see :mod:`cuda2nki.frontend.lambdas`).

A lambda such as ::

    auto pick = [&](unsigned idx) -> const uint4 {
        switch (idx) { case 0: return r.x; case 1: return r.y; }
        return {};
    };

is inlined as a block.  Its ``return`` statements become stores to the call's result local
and to a ``done`` flag (a local set to 0 before the block), followed by a ``break`` where the
``return`` sits in a loop or ``switch`` of the lambda; a loop or ``switch`` that may return
is followed by ``if (done) break;`` when it is itself in one, and the statements after a
statement that may return run under ``if (!done)``.  So exactly the statements C++ would run
before the ``return`` run, whatever the nesting.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.visit import find

_INT = A.ScalarType(name="int32")


@dataclass(frozen=True)
class Exit:
    """Where a rewritten ``return`` stores: the result local (None: no value) and the flag."""

    result: A.Name | None
    done: A.Name


def has_return(s: A.Stmt) -> bool:
    return isinstance(s, A.Return) or bool(find(s, A.Return))


def rewrite(stmts: list[A.Stmt], ex: Exit) -> list[A.Stmt]:
    """The lambda body ``stmts`` with its returns turned into stores and exits."""
    return _seq(stmts, ex, False)


def _seq(stmts: list[A.Stmt] | tuple[A.Stmt, ...], ex: Exit, breakable: bool) -> list[A.Stmt]:
    out: list[A.Stmt] = []
    for i, s in enumerate(stmts):
        if not has_return(s):
            out.append(s)
            continue
        out.extend(_stmt(s, ex, breakable))
        rest = _seq(stmts[i + 1 :], ex, breakable)
        if rest:
            loc = rest[0].loc
            out.append(
                N.If(loc=loc, cond=_not_done(ex, loc), then=N.Block(loc=loc, body=tuple(rest)))
            )
        return out
    return out


def _stmt(s: A.Stmt, ex: Exit, breakable: bool) -> list[A.Stmt]:
    loc = s.loc
    if isinstance(s, A.Return):
        out: list[A.Stmt] = []
        if ex.result is not None and s.value is not None:
            ty = ex.result.ty
            v = s.value if s.value.ty == ty else N.Cast(loc=loc, to=ty, operand=s.value, ty=ty)
            out.append(_assign(ex.result, v, loc))
        out.append(_assign(ex.done, N.IntLit(loc=loc, value=1, ty=_INT), loc))
        if breakable:
            out.append(N.Break(loc=loc))
        return out
    if isinstance(s, A.Block):
        return [N.Block(loc=loc, body=tuple(_seq(s.body, ex, breakable)))]
    if isinstance(s, A.If):
        then = _block(_seq([s.then], ex, breakable), loc)
        else_ = _block(_seq([s.else_], ex, breakable), loc) if s.else_ is not None else None
        return [N.If(loc=loc, cond=s.cond, then=then, else_=else_)]
    if isinstance(s, A.For | A.While | A.DoWhile):
        body = _block(_seq([s.body], ex, True), loc)
        loop = _replace_body(s, body)
        return [loop, *_leave(ex, loc, breakable)]
    if isinstance(s, A.Switch):
        cases = tuple(
            N.Case(loc=c.loc, values=c.values, body=tuple(_seq(c.body, ex, True))) for c in s.cases
        )
        return [N.Switch(loc=loc, cond=s.cond, cases=cases), *_leave(ex, loc, breakable)]
    raise NotImplementedError(type(s).__name__)  # pragma: no cover - no other statement nests


def _replace_body(s: A.Stmt, body: A.Stmt) -> A.Stmt:
    if isinstance(s, A.For):
        return N.For(loc=s.loc, init=s.init, cond=s.cond, step=s.step, body=body, unroll=s.unroll)
    if isinstance(s, A.While):
        return N.While(loc=s.loc, cond=s.cond, body=body)
    assert isinstance(s, A.DoWhile)
    return N.DoWhile(loc=s.loc, body=body, cond=s.cond)


def _leave(ex: Exit, loc: object, breakable: bool) -> list[A.Stmt]:
    """After a loop or switch that may return, inside another: leave that one too."""
    if not breakable:
        return []
    return [N.If(loc=loc, cond=ex.done, then=N.Break(loc=loc))]


def _block(stmts: list[A.Stmt], loc: object) -> A.Stmt:
    return stmts[0] if len(stmts) == 1 else N.Block(loc=loc, body=tuple(stmts))


def _not_done(ex: Exit, loc: object) -> A.Expr:
    return N.Unary(loc=loc, op="!", operand=ex.done, ty=_INT)


def _assign(target: A.Name, value: A.Expr, loc: object) -> A.Stmt:
    return N.ExprStmt(
        loc=loc, expr=N.Assign(loc=loc, op="=", target=target, value=value, ty=target.ty)
    )
