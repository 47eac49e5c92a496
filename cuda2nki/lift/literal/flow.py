"""``break`` and ``continue`` as per-thread flags (literal lowering).

The literal lowering runs the threads of a block in lockstep, so a loop that some threads leave
early (``if (a[x] >= v) { idx = x; break; }``) or whose iteration some threads cut short
(``if (r >= n) continue;``) cannot end or skip for one thread alone.  This rewrite states the
same control flow with flags that the lowering predicates like any per-thread ``if``:

* a ``break`` sets the loop's flag ``brk`` (declared false in front of the loop), and a thread
  whose flag is set runs nothing more of the loop: every statement after one that may break
  is guarded by ``!brk``, and so is every later iteration;
* a ``continue`` sets the iteration's flag ``cnt`` (declared false at the top of the body) and
  guards the rest of the body the same way; the ``for`` step still runs, as in C;
* a ``for`` loop keeps its own condition (its trip count is what it was: a thread that broke
  only stays masked); ``while`` and ``do`` loops, which only a condition ends, and a ``for``
  loop with no condition (or a constant one) test ``!brk && cond``;
* a counter that a ``for`` step writes and that outlives the loop (it is read after it) is
  saved where a thread breaks and restored after the loop, so that the thread keeps the value
  it broke at while the loop itself keeps stepping it for every thread.

Flags of a uniform condition stay uniform (the lowering then keeps plain Python control flow);
``continue`` inside a ``switch`` and ``break`` of a ``switch`` are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from cuda2nki.frontend import ast as A

_BOOL = A.ScalarType(name="bool")

#: the literal lowering's refusals that this rewrite answers
EXIT_REFUSALS = frozenset({"break under a per-thread condition", "continue statement"})


def owns_exit(s: A.Stmt, kinds: tuple[type, ...] = (A.Break, A.Continue)) -> bool:
    """Whether ``s`` holds a ``break``/``continue`` that leaves or skips the enclosing loop."""
    if isinstance(s, kinds):
        return True
    if isinstance(s, A.For | A.While | A.DoWhile):
        return False
    if isinstance(s, A.Switch):  # its breaks are its own; a continue belongs to the loop
        return A.Continue in kinds and any(owns_exit(x, (A.Continue,)) for c in s.cases
                                           for x in c.body)  # fmt: skip
    return any(owns_exit(c, kinds) for c in _children(s))


def flag_exits(body: A.Block, tag: str = "") -> A.Block:
    """``body`` with every loop's ``break``/``continue`` stated as flags (see the module);
    ``tag`` sets the flags of one function apart from those of the functions inlined in it."""
    counter = (f"{tag}{i}" for i in range(1, 1 << 30))
    outer = body
    return _stmt(body, counter, outer)  # type: ignore[return-value]


def _stmt(s: A.Stmt, counter: Iterator[str], outer: A.Block) -> A.Stmt:
    """``s`` with the loops inside it rewritten (innermost first)."""
    if isinstance(s, A.Block):
        return dataclasses.replace(s, body=tuple(_stmt(x, counter, outer) for x in s.body))
    if isinstance(s, A.If):
        return dataclasses.replace(
            s,
            then=_stmt(s.then, counter, outer),
            else_=None if s.else_ is None else _stmt(s.else_, counter, outer),
        )
    if isinstance(s, A.Switch):
        cases = tuple(
            dataclasses.replace(c, body=tuple(_stmt(x, counter, outer) for x in c.body))
            for c in s.cases
        )
        return dataclasses.replace(s, cases=cases)
    if isinstance(s, A.For | A.While | A.DoWhile):
        inner = dataclasses.replace(s, body=_stmt(s.body, counter, outer))
        if not owns_exit(inner.body) or _switch_continue(inner.body):
            return inner
        return _loop(inner, next(counter), outer, s)
    return s


def _endless(cond: A.Expr | None) -> bool:
    """Whether a loop condition is absent or a nonzero constant (only a break ends the loop)."""
    if cond is None:
        return True
    return isinstance(cond, A.BoolLit | A.IntLit) and bool(cond.value)


def _switch_continue(s: A.Stmt) -> bool:
    if isinstance(s, A.Switch):
        return any(owns_exit(x, (A.Continue,)) for c in s.cases for x in c.body)
    if isinstance(s, A.For | A.While | A.DoWhile):
        return False
    return any(_switch_continue(c) for c in _children(s))


def _loop(s: A.For | A.While | A.DoWhile, k: str, outer: A.Block, orig: A.Stmt) -> A.Stmt:
    """Loop ``s`` (rewritten inside; ``orig`` as it stands in ``outer``) with its own exits
    stated as flags."""
    loc = s.loc
    brk = f"__c2n_brk{k}" if owns_exit(s.body, (A.Break,)) else None
    cnt = f"__c2n_cnt{k}" if owns_exit(s.body, (A.Continue,)) else None
    kept = _outliving(s, outer, orig) if brk is not None else {}
    saves = {name: f"__c2n_at{k}_{name}" for name in kept}
    on_break = tuple(_assign(saves[n], A.Name(loc=loc, name=n, ty=t), loc)
                     for n, t in kept.items())  # fmt: skip
    body = _guarded(_items(s.body), Exits(brk, cnt, on_break), loc)
    if cnt is not None:
        body = (_decl(cnt, loc), *body)
    if brk is not None:  # a thread that broke runs no later iteration
        body = (_if(_not_flags(brk, None, loc), A.Block(loc=loc, body=body), loc),)
    new_body = A.Block(loc=loc, body=body)
    pre: tuple[A.Stmt, ...] = () if brk is None else (_decl(brk, loc),)
    pre += tuple(_decl(saves[n], loc, t) for n, t in kept.items())
    post: tuple[A.Stmt, ...] = ()
    if kept:  # a thread that broke keeps the counter value it broke at
        restore = tuple(_assign(n, A.Name(loc=loc, name=saves[n], ty=t), loc)
                        for n, t in kept.items())  # fmt: skip
        post = (_if(A.Name(loc=loc, name=brk, ty=_BOOL), A.Block(loc=loc, body=restore), loc),)  # type: ignore[arg-type]
    if isinstance(s, A.For) and not _endless(s.cond):
        loop: A.Stmt = dataclasses.replace(s, init=(), body=new_body)
        return A.Block(loc=loc, body=(*s.init, *pre, loop, *post))
    if isinstance(s, A.For):  # ``for (;;)``: only a break ends it, as a ``while (1)``
        true = A.BoolLit(loc=loc, value=True, ty=_BOOL)  # type: ignore[arg-type]
        cond = true if brk is None else _and(_not_flags(brk, None, loc), true, loc)
        loop = dataclasses.replace(s, init=(), body=new_body, cond=cond)
        return A.Block(loc=loc, body=(*s.init, *pre, loop, *post))
    cond = s.cond if brk is None else _and(_not_flags(brk, None, loc), s.cond, loc)
    return A.Block(loc=loc, body=(*pre, dataclasses.replace(s, body=new_body, cond=cond)))


@dataclass(frozen=True)
class Exits:
    """The flags a loop's exits set, and what a ``break`` saves first."""

    brk: str | None
    cnt: str | None
    on_break: tuple[A.Stmt, ...] = ()


def _guarded(items: tuple[A.Stmt, ...], ex: Exits, loc: object) -> tuple[A.Stmt, ...]:
    """``items`` with ``break``/``continue`` setting the flags and every statement after one
    that may set them guarded by their negation."""
    out: list[A.Stmt] = []
    for i, s in enumerate(items):
        if isinstance(s, A.Break):
            out.extend(ex.on_break)
            out.append(_set(ex.brk, s.loc))  # type: ignore[arg-type]
            return tuple(out)
        if isinstance(s, A.Continue):
            out.append(_set(ex.cnt, s.loc))  # type: ignore[arg-type]
            return tuple(out)
        if not owns_exit(s):
            out.append(s)
            continue
        out.append(_exits(s, ex))
        rest = _guarded(items[i + 1 :], ex, loc)
        if rest:
            guard = _not_flags(ex.brk, ex.cnt, s.loc)
            out.append(_if(guard, A.Block(loc=s.loc, body=rest), s.loc))
        return tuple(out)
    return tuple(out)


def _exits(s: A.Stmt, ex: Exits) -> A.Stmt:
    """A statement holding a loop exit, its exits set as flags (an ``if`` or a block)."""
    if isinstance(s, A.Block):
        return dataclasses.replace(s, body=_guarded(s.body, ex, s.loc))
    if isinstance(s, A.If):
        return dataclasses.replace(
            s,
            then=_as_block(_guarded(_items(s.then), ex, s.loc), s.then.loc),
            else_=None
            if s.else_ is None
            else _as_block(_guarded(_items(s.else_), ex, s.loc), s.else_.loc),
        )
    return s  # a switch holding a continue: left as is (the lowering refuses it)


def _items(s: A.Stmt) -> tuple[A.Stmt, ...]:
    return s.body if isinstance(s, A.Block) else (s,)


def _as_block(items: tuple[A.Stmt, ...], loc: object) -> A.Block:
    return A.Block(loc=loc, body=items)  # type: ignore[arg-type]


def _decl(name: str, loc: object, ty: A.ScalarType = _BOOL) -> A.VarDecl:
    """``bool name = false;`` (or an integer local starting at 0)."""
    init: A.Expr = (
        A.BoolLit(loc=loc, value=False, ty=_BOOL)  # type: ignore[arg-type]
        if ty == _BOOL
        else A.IntLit(loc=loc, value=0, ty=ty)  # type: ignore[arg-type]
    )
    return A.VarDecl(loc=loc, name=name, ty=ty, init=init)  # type: ignore[arg-type]


def _set(name: str, loc: object) -> A.ExprStmt:
    return _assign(name, A.BoolLit(loc=loc, value=True, ty=_BOOL), loc)  # type: ignore[arg-type]


def _assign(name: str, value: A.Expr, loc: object) -> A.ExprStmt:
    target = A.Name(loc=loc, name=name, ty=value.ty)  # type: ignore[arg-type]
    return A.ExprStmt(loc=loc, expr=A.Assign(loc=loc, op="=", target=target, value=value,  # type: ignore[arg-type]
                                             ty=value.ty))  # fmt: skip


def _not_flags(brk: str | None, cnt: str | None, loc: object) -> A.Expr:
    terms = [
        A.Unary(loc=loc, op="!", operand=A.Name(loc=loc, name=n, ty=_BOOL), ty=_BOOL)  # type: ignore[arg-type]
        for n in (brk, cnt)
        if n is not None
    ]
    out = terms[0]
    for t in terms[1:]:
        out = _and(out, t, loc)
    return out


def _and(a: A.Expr, b: A.Expr, loc: object) -> A.Expr:
    return A.Binary(loc=loc, op="&&", left=a, right=b, ty=_BOOL)  # type: ignore[arg-type]


def _if(cond: A.Expr, then: A.Stmt, loc: object) -> A.If:
    return A.If(loc=loc, cond=cond, then=then)  # type: ignore[arg-type]


def _outliving(s: A.Stmt, outer: A.Block, orig: A.Stmt) -> dict[str, A.ScalarType]:
    """The integer locals the step of ``for`` loop ``s`` writes that are declared outside the
    loop and read outside it (a thread that broke must keep the value it broke at), with their
    types."""
    if not isinstance(s, A.For) or s.step is None:
        return {}
    own = {d.name for d in s.init if isinstance(d, A.VarDecl)}
    stepped: dict[str, A.ScalarType] = {}
    for n in _nodes(s.step):
        target = None
        if isinstance(n, A.Unary) and n.op in ("pre++", "post++", "pre--", "post--"):
            target = n.operand
        elif isinstance(n, A.Assign):
            target = n.target
        if isinstance(target, A.Name) and target.name not in own:
            ty = target.ty if isinstance(target.ty, A.ScalarType) else A.ScalarType(name="int32")
            stepped[target.name] = ty
    read = {n.name for n in _nodes(outer, skip=orig) if isinstance(n, A.Name)}
    return {name: ty for name, ty in stepped.items() if name in read}


def _nodes(x: object, skip: object = None) -> Iterator[A.Node]:
    if x is skip and skip is not None:
        return
    if isinstance(x, A.Node):
        yield x
        for f in dataclasses.fields(x):
            if f.name not in ("loc", "ty", "to", "of"):
                yield from _nodes(getattr(x, f.name), skip)
    elif isinstance(x, tuple | list):
        for item in x:
            yield from _nodes(item, skip)


def _children(s: A.Stmt) -> list[A.Stmt]:
    if isinstance(s, A.Block):
        return list(s.body)
    if isinstance(s, A.If):
        return [s.then] + ([s.else_] if s.else_ is not None else [])
    if isinstance(s, A.For | A.While | A.DoWhile):
        return [s.body]
    return []
