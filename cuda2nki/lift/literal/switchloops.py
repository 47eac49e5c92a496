"""``switch`` statements whose cases fall through or break early, as flagged if-chains.

The literal lowering spells a ``switch`` whose cases each end in ``break`` as an if/else chain
(:mod:`.structure`).  One whose case falls through into the next, or breaks from inside a
branch (``case 2: if (edge) break; ...``), is rewritten here, before lowering, into the form
C gives it::

    { int sw = cond; bool on = false, done = false;
      if (!done && (on || sw == 0)) { on = true; <case 0> }
      if (!done && (on || sw == 1 || sw == 2)) { on = true; <cases 1, 2> }
      if (!done && (on || <no value matches>)) { on = true; <default> }
    }

A ``break`` of a case sets ``done`` and the statements after it in that case run only where
it is clear (the flags of :mod:`.flow`); entering a case sets ``on``, so that execution falls
through the cases after it in source order, and ``default`` is entered where no case value
matches.  A switch whose cases hold a ``continue`` of an enclosing loop is left as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.flow import Exits, _guarded, owns_exit

#: the refusals of the if/else form that this rewriting answers
SWITCH_REFUSALS = frozenset(
    {"a switch case that falls through into the next", "a break inside a switch case body"}
)
_BOOL = A.ScalarType(name="bool")
_INT = A.ScalarType(name="int32")


def switches_as_loops(s: A.Stmt) -> A.Stmt:
    """``s`` with every switch that falls through or breaks early rewritten (module doc)."""
    return _stmt(s, iter(range(1, 1 << 30)))


def _stmt(s: A.Stmt, counter: Iterator[int]) -> A.Stmt:
    if isinstance(s, A.Block):
        return dataclasses.replace(s, body=tuple(_stmt(x, counter) for x in s.body))
    if isinstance(s, A.If):
        return dataclasses.replace(
            s,
            then=_stmt(s.then, counter),
            else_=None if s.else_ is None else _stmt(s.else_, counter),
        )
    if isinstance(s, A.For | A.While | A.DoWhile):
        return dataclasses.replace(s, body=_stmt(s.body, counter))
    if isinstance(s, A.Switch):
        cases = tuple(
            dataclasses.replace(c, body=tuple(_stmt(x, counter) for x in c.body)) for c in s.cases
        )
        s = dataclasses.replace(s, cases=cases)
        if _needs_loop(s) and not any(owns_exit(x, (A.Continue,)) for c in cases for x in c.body):
            return _as_flags(s, next(counter))
    return s


def _needs_loop(s: A.Switch) -> bool:
    """Whether a case falls through into the next or breaks from inside its body."""
    for c in s.cases:
        if not c.body:
            continue
        body = c.body[:-1] if isinstance(c.body[-1], A.Break) else c.body
        if body is c.body and c is not s.cases[-1]:
            return True
        if any(owns_exit(x, (A.Break,)) for x in body):
            return True
    return False


def _as_flags(s: A.Switch, k: int) -> A.Stmt:
    loc = s.loc
    ty = s.cond.ty if isinstance(s.cond.ty, A.ScalarType) and s.cond.ty.name != "bool" else _INT
    sw, on, done = f"__c2n_sw{k}", f"__c2n_swon{k}", f"__c2n_swdone{k}"
    key = A.Name(loc=loc, name=sw, ty=ty)
    flag = A.Name(loc=loc, name=on, ty=_BOOL)
    values = [v for c in s.cases for v in c.values]
    parts: list[A.Stmt] = []
    for c in s.cases:
        match = _any_of(key, c.values, loc) if c.values else None
        if not c.values:  # default: no case value matches
            none = _any_of(key, tuple(values), loc)
            match = A.BoolLit(loc=loc, value=True, ty=_BOOL) if none is None else A.Unary(
                loc=loc, op="!", operand=none, ty=_BOOL)  # fmt: skip
        enter = A.Binary(loc=loc, op="||", left=flag, right=match, ty=_BOOL)  # type: ignore[arg-type]
        enter = A.Binary(loc=loc, op="&&", left=_not(done, loc), right=enter, ty=_BOOL)
        turn_on = A.ExprStmt(loc=loc, expr=A.Assign(
            loc=loc, op="=", target=flag, value=A.BoolLit(loc=loc, value=True, ty=_BOOL),
            ty=_BOOL))  # fmt: skip
        body = _guarded((turn_on, *c.body), Exits(done, None), loc)
        parts.append(A.If(loc=loc, cond=enter, then=A.Block(loc=loc, body=body)))
    false = A.BoolLit(loc=loc, value=False, ty=_BOOL)
    decls = (
        A.VarDecl(loc=loc, name=sw, ty=ty, init=s.cond),
        A.VarDecl(loc=loc, name=on, ty=_BOOL, init=false),
        A.VarDecl(loc=loc, name=done, ty=_BOOL, init=false),
    )
    return A.Block(loc=loc, body=(*decls, *parts))


def _not(name: str, loc: object) -> A.Expr:
    return A.Unary(loc=loc, op="!", operand=A.Name(loc=loc, name=name, ty=_BOOL), ty=_BOOL)


def _any_of(key: A.Name, values: tuple[int, ...], loc: object) -> A.Expr | None:
    """``key == v0 || key == v1 ...`` (None for no values)."""
    out: A.Expr | None = None
    for v in values:
        test = A.Binary(loc=loc, op="==", left=key, right=A.IntLit(loc=loc, value=v, ty=_INT),
                        ty=_BOOL)  # fmt: skip
        out = test if out is None else A.Binary(loc=loc, op="||", left=out, right=test, ty=_BOOL)
    return out
