"""Statement structure for the literal lowering: nested exits, returns, ``switch`` as ``if``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer


def _has_continue(s: A.Stmt) -> bool:
    if isinstance(s, A.Continue):
        return True
    if isinstance(s, A.For | A.While | A.DoWhile):
        return False  # a continue in a nested loop belongs to that loop
    for child in _children(s):
        if _has_continue(child):
            return True
    return False


def _children(s: A.Stmt) -> list[A.Stmt]:
    if isinstance(s, A.Block):
        return list(s.body)
    if isinstance(s, A.If):
        return [s.then] + ([s.else_] if s.else_ is not None else [])
    if isinstance(s, A.Switch):
        return [x for c in s.cases for x in c.body]
    if isinstance(s, A.For | A.While | A.DoWhile):
        return [s.body]
    return []


def _has_varying_return(body: A.Stmt, low: Lowerer) -> bool:
    """Whether some return may run under a per-thread condition (conservative: any nested
    return, or any return inside a loop)."""

    def walk(s: A.Stmt, nested: bool) -> bool:
        if isinstance(s, A.Return):
            return nested
        if isinstance(s, A.Block):
            return any(walk(c, nested) for c in s.body)
        return any(walk(c, True) for c in _children(s))

    return walk(body, False)


def _switch_as_if(s: A.Switch, low: Lowerer) -> A.Stmt:
    """``switch`` as an if/else chain (cases ending in ``break``; empty cases fall through)."""
    groups: list[tuple[list[int], bool, tuple[A.Stmt, ...]]] = []
    pending: list[int] = []
    pending_default = False
    for c in s.cases:
        if not c.values:
            pending_default = True
        pending.extend(c.values)
        if not c.body:
            continue
        body = c.body
        if isinstance(body[-1], A.Break):
            body = body[:-1]
        elif c is not s.cases[-1]:
            raise low.refuse("a switch case that falls through into the next", c)
        if any(_has_break(x) for x in body):
            raise low.refuse("a break inside a switch case body", c)
        groups.append((pending, pending_default, body))
        pending, pending_default = [], False
    default = next((g for g in groups if g[1]), None)
    chain: A.Stmt | None = (
        A.Block(loc=s.loc, body=default[2]) if default is not None and default[2] else None
    )
    int_t = A.ScalarType(name="int32")
    bool_t = A.ScalarType(name="bool")
    for values, is_default, body in reversed(groups):
        if is_default:
            continue
        cond: A.Expr | None = None
        for v in values:
            test = A.Binary(loc=s.loc, op="==", left=s.cond,
                            right=A.IntLit(loc=s.loc, value=v, ty=int_t), ty=bool_t)  # fmt: skip
            cond = test if cond is None else A.Binary(
                loc=s.loc, op="||", left=cond, right=test, ty=bool_t)  # fmt: skip
        if cond is None:
            continue
        chain = A.If(loc=s.loc, cond=cond, then=A.Block(loc=s.loc, body=body), else_=chain)
    return chain if chain is not None else A.Empty(loc=s.loc)


def _has_break(s: A.Stmt) -> bool:
    if isinstance(s, A.Break):
        return True
    if isinstance(s, A.For | A.While | A.DoWhile | A.Switch):
        return False
    return any(_has_break(c) for c in _children(s))
