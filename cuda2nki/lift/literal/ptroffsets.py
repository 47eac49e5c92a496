"""Pointers that only move, held as a fixed pointer plus an integer offset (literal lowering).

``dout += img_size;`` inside a loop that runs under one branch of an ``if`` leaves ``dout``
pointing at different places after the branch; the literal lowering keeps a pointer as one
tensor plus an offset known where it is bound and refused the merge.  A pointer (a parameter or
a local) that is only ever moved -- ``p += e``, ``p -= e``, ``++p``, ``p--``, ``p = p + e`` --
and never has its address taken keeps its meaning as the pointer it started as plus an integer
offset that the moves update::

    dout += blockIdx.x * n;            int __c2n_off_dout = 0;   (where dout starts)
    for (...) { s += dout[i];     ->   __c2n_off_dout += blockIdx.x * n;
                dout += n; }           for (...) { s += (dout + __c2n_off_dout)[i];
                                                   __c2n_off_dout += n; }

The offset is an ordinary integer local, which the lowering carries through loops and branches
like any other.  Pointers assigned anything else are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_INT = A.ScalarType(name="int32")
_MOVES = ("pre++", "pre--", "post++", "post--")


def offset_pointers(fn: A.Function, looped: bool = False) -> A.Function:
    """``fn`` with its only-moved pointers held as a base plus an offset (see the module);
    ``looped``: only those moved inside a loop (a runtime loop carries no trace-time pointer)."""
    names = _moved_only(fn)
    if looped:
        names &= _moved_in_loops(fn)
    if not names:
        return fn
    offs = {n: f"__c2n_off_{n}" for n in names}
    body = _rewrite(fn.body, offs)
    params = [p.name for p in fn.params if p.name in offs]
    heads = tuple(_zero(offs[n], fn.body.loc) for n in params)
    body = dataclasses.replace(body, body=heads + body.body)  # type: ignore[union-attr]
    return dataclasses.replace(fn, body=body)


def _target(n: A.Node) -> str | None:
    """The pointer name a move ``n`` moves (None: not a move of a plain name)."""
    if isinstance(n, A.Unary) and n.op in _MOVES and isinstance(n.operand, A.Name):
        return n.operand.name
    if isinstance(n, A.Assign) and isinstance(n.target, A.Name):
        return n.target.name
    return None


def _is_move(n: A.Node) -> bool:
    if isinstance(n, A.Unary):
        return True
    assert isinstance(n, A.Assign)
    if n.op in ("+=", "-="):
        return True
    v = n.value
    return (
        n.op == "="
        and isinstance(v, A.Binary)
        and v.op in ("+", "-")
        and isinstance(v.left, A.Name)
        and v.left.name == n.target.name  # type: ignore[union-attr]
    )


def _moved_only(fn: A.Function) -> set[str]:
    ptrs = {p.name for p in fn.params if isinstance(p.ty, A.PointerType)}
    decls: dict[str, int] = {}
    for n in walk(fn.body):
        if isinstance(n, A.VarDecl):
            decls[n.name] = decls.get(n.name, 0) + 1
            if isinstance(n.ty, A.PointerType) and n.storage == "local":
                ptrs.add(n.name)
    moved: set[str] = set()
    bad: set[str] = set()  # assigned otherwise, address taken, declared in a for header
    for n in walk(fn.body):
        if isinstance(n, A.For):
            bad |= {d.name for d in n.init if isinstance(d, A.VarDecl)}
        name = _target(n)
        if name is not None and name in ptrs:
            (moved if _is_move(n) else bad).add(name)
        if isinstance(n, A.Unary) and n.op == "&" and isinstance(n.operand, A.Name):
            bad.add(n.operand.name)
    params = {p.name for p in fn.params}
    once = {n for n in moved if decls.get(n, 0) + (n in params) == 1}
    return once - bad


def _moved_in_loops(fn: A.Function) -> set[str]:
    out: set[str] = set()
    for loop in walk(fn.body):
        if isinstance(loop, A.For | A.While | A.DoWhile):
            steps = (loop.step,) if isinstance(loop, A.For) and loop.step is not None else ()
            for n in walk((loop.body, *steps)):
                name = _target(n)
                if name is not None and _is_move(n):
                    out.add(name)
    return out


def _zero(name: str, loc: object) -> A.VarDecl:
    return A.VarDecl(loc=loc, name=name, ty=_INT, init=A.IntLit(loc=loc, value=0, ty=_INT))  # type: ignore[arg-type]


def _rewrite(body: A.Block, offs: dict[str, str]) -> A.Block:
    def off(name: str, loc: object) -> A.Name:
        return A.Name(loc=loc, name=offs[name], ty=_INT)  # type: ignore[arg-type]

    def expr(e: A.Expr) -> A.Expr:
        name = _target(e)
        if name in offs:  # a move: of the offset
            return _move(e, off(name, e.loc))  # type: ignore[arg-type]
        if isinstance(e, A.Name) and e.name in offs:
            return A.Binary(loc=e.loc, op="+", left=e, right=off(e.name, e.loc), ty=e.ty)
        return e

    def stmt(s: A.Stmt) -> list[A.Stmt]:
        if isinstance(s, A.VarDecl) and s.name in offs:
            return [s, _zero(offs[s.name], s.loc)]
        return [s]

    return _map_block(body, expr, stmt)


def _move(e: A.Expr, off: A.Name) -> A.Expr:
    if isinstance(e, A.Unary):
        return dataclasses.replace(e, operand=off, ty=_INT)
    assert isinstance(e, A.Assign)
    if e.op in ("+=", "-="):
        return dataclasses.replace(e, target=off, ty=_INT)
    v: A.Binary = e.value  # type: ignore[assignment]
    return A.Assign(loc=e.loc, op=f"{v.op}=", target=off, value=v.right, ty=_INT)


def _map_block(
    b: A.Block,
    expr: Callable[[A.Expr], A.Expr],
    stmt: Callable[[A.Stmt], list[A.Stmt]],
) -> A.Block:
    out: list[A.Stmt] = []
    for s in b.body:
        out.extend(stmt(_map(s, expr, stmt)))  # type: ignore[arg-type]
    return dataclasses.replace(b, body=tuple(out))


def _map(x: object, expr: Callable[[A.Expr], A.Expr], stmt: Callable) -> object:
    """``x`` rebuilt: blocks statement by statement (a statement may become several), moves
    and reads of the pointers through ``expr`` (a move's own target is not read)."""
    if isinstance(x, tuple):
        return tuple(_map(y, expr, stmt) for y in x)
    if isinstance(x, A.Block):
        return _map_block(x, expr, stmt)
    if not isinstance(x, A.Node):
        return x
    if isinstance(x, A.Expr) and _target(x) is not None and _is_move(x):
        inner = x
        if isinstance(x, A.Assign):  # the amount may read other moved pointers, not its target
            value = x.value.right if x.op == "=" else x.value  # type: ignore[union-attr]
            moved = _map(value, expr, stmt)
            if x.op == "=":
                moved = dataclasses.replace(x.value, right=moved)  # type: ignore[arg-type]
            inner = dataclasses.replace(x, value=moved)  # type: ignore[arg-type]
        return expr(inner)  # type: ignore[arg-type]
    changes = {}
    for f in dataclasses.fields(x):
        if f.name in ("loc", "ty", "to", "of"):
            continue
        old = getattr(x, f.name)
        if isinstance(x, A.For) and f.name == "body" and not isinstance(old, A.Block):
            old = A.Block(loc=old.loc, body=(old,))
        new = _map(old, expr, stmt)
        if new is not old:
            changes[f.name] = new
    out = dataclasses.replace(x, **changes) if changes else x
    return expr(out) if isinstance(out, A.Expr) else out
