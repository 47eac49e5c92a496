"""Pointer locals chosen by a condition, stated as a condition on each access (literal lowering).

``T* p = c ? a : b;`` picks one of two buffers per thread (the key or the value cache by lane,
endo or epi points by block).  A literal port holds no per-thread choice of tensor, but every
access through ``p`` can make the choice itself::

    const float* src = k ? x : y;          bool __c2n_psel1 = k;
    float* dst = k ? u + o : w + o;   ->   ...
    dst[i] = src[i] * 2.0f;                if (__c2n_psel2) (u + o)[i] = (__c2n_psel1 ? x[i] : y[i]) * 2.0f;
                                           else (w + o)[i] = (__c2n_psel1 ? x[i] : y[i]) * 2.0f;

The condition is evaluated once, where ``p`` was declared (a flag local); pointer arithmetic
on ``p`` (``p + off``, a derived pointer local) is distributed over both branches; a read
``p[i]`` / ``*p`` becomes ``c ? a[i] : b[i]`` and a store through ``p`` an ``if``/``else`` of
the two stores.  Only a pointer local declared once, never reassigned nor taken the address
of, whose branches read names that nothing assigns (so they mean at each access what they
meant at the declaration), is rewritten; anything else is left as it was.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_BOOL = A.ScalarType(name="bool")
_PREFIX = "__c2n_psel"
_MAX_ROUNDS = 16
#: the literal lowering's refusal that this rewrite answers
POINTER_VALUE = "a pointer or array used as a value"


def select_pointers(fn: A.Function, tag: str = "") -> A.Function:
    """``fn`` with its condition-chosen pointer locals stated per access (see the module);
    ``tag`` sets the flags of one function apart from those of the functions inlined in it."""
    body = fn.body
    for k in range(1, _MAX_ROUNDS + 1):
        d = _candidate(body)
        if d is None:
            break
        body = _rewrite(body, d, f"{_PREFIX}{tag}{k}")
    return fn if body is fn.body else dataclasses.replace(fn, body=body)


def _is_ptr(ty: object) -> bool:
    return isinstance(ty, A.PointerType | A.ArrayType)


def _candidate(body: A.Block) -> A.VarDecl | None:
    """The first pointer local initialised by a condition that may be stated per access."""
    decls: dict[str, int] = {}
    written: set[str] = set()
    addressed: set[str] = set()
    for n in walk(body):
        if isinstance(n, A.VarDecl):
            decls[n.name] = decls.get(n.name, 0) + 1
        elif isinstance(n, A.Assign) and isinstance(n.target, A.Name):
            written.add(n.target.name)
        elif isinstance(n, A.Unary) and isinstance(n.operand, A.Name):
            if n.op in ("pre++", "pre--", "post++", "post--"):
                written.add(n.operand.name)
            elif n.op == "&":
                addressed.add(n.operand.name)
    for n in walk(body):
        if not (isinstance(n, A.VarDecl) and isinstance(n.ty, A.PointerType)):
            continue
        t = n.init
        if not (isinstance(t, A.Ternary) and _is_ptr(t.then.ty) and _is_ptr(t.else_.ty)):
            continue
        if decls[n.name] != 1 or n.name in written | addressed or n.storage != "local":
            continue
        reads = {x.name for x in walk((t.then, t.else_)) if isinstance(x, A.Name)}
        if reads & (written | addressed) or any(decls.get(r, 0) > 1 for r in reads):
            continue
        return n
    return None


def _rewrite(body: A.Block, d: A.VarDecl, flag: str) -> A.Block:
    t: A.Ternary = d.init  # type: ignore[assignment]
    loc = d.loc
    cond = t.cond
    if cond.ty != _BOOL:
        zero = A.IntLit(loc=loc, value=0, ty=A.ScalarType(name="int32"))
        cond = A.Binary(loc=loc, op="!=", left=cond, right=zero, ty=_BOOL)
    sel = A.Name(loc=loc, name=flag, ty=_BOOL)
    chosen = A.Ternary(loc=t.loc, cond=sel, then=t.then, else_=t.else_, ty=d.ty)

    def expr(e: A.Expr) -> A.Expr:
        if isinstance(e, A.Name) and e.name == d.name:
            return dataclasses.replace(chosen, loc=e.loc)
        return _distribute(e, flag)

    def stmt(s: A.Stmt) -> A.Stmt:
        if isinstance(s, A.VarDecl) and s.name == d.name:
            return A.VarDecl(loc=loc, name=flag, ty=_BOOL, init=cond)
        return _split_store(s, flag)

    return _map(body, expr, stmt)  # type: ignore[return-value]


def _chosen(e: object, flag: str) -> bool:
    return (
        isinstance(e, A.Ternary)
        and isinstance(e.cond, A.Name)
        and e.cond.name == flag
        and _is_ptr(e.ty)
    )


def _both(t: A.Ternary, make: Callable[[A.Expr], A.Expr], ty: object) -> A.Ternary:
    return dataclasses.replace(t, then=make(t.then), else_=make(t.else_), ty=ty)


def _distribute(e: A.Expr, flag: str) -> A.Expr:
    """``e`` with a chosen pointer under it moved out: ``(c ? a : b) + o`` -> ``c ? a + o :
    b + o``, ``(c ? a : b)[i]`` -> ``c ? a[i] : b[i]``, and so for ``*`` and casts."""
    if isinstance(e, A.Binary) and e.op in ("+", "-") and _chosen(e.left, flag):
        return _both(e.left, lambda x: dataclasses.replace(e, left=x, ty=x.ty), e.ty)  # type: ignore[arg-type]
    if isinstance(e, A.Binary) and e.op == "+" and _chosen(e.right, flag):
        return _both(e.right, lambda x: dataclasses.replace(e, right=x, ty=x.ty), e.ty)  # type: ignore[arg-type]
    if isinstance(e, A.Index) and _chosen(e.base, flag):
        return _both(e.base, lambda x: dataclasses.replace(e, base=x), e.ty)  # type: ignore[arg-type]
    if isinstance(e, A.Unary) and e.op == "*" and _chosen(e.operand, flag):
        return _both(e.operand, lambda x: dataclasses.replace(e, operand=x), e.ty)  # type: ignore[arg-type]
    if isinstance(e, A.Cast) and _is_ptr(e.to) and _chosen(e.operand, flag):
        return _both(e.operand, lambda x: dataclasses.replace(e, operand=x), e.ty)  # type: ignore[arg-type]
    return e


def _split_store(s: A.Stmt, flag: str) -> A.Stmt:
    """A store through a chosen element (``(c ? a[i] : b[i]) = v``) as an ``if``/``else`` of
    the two stores."""
    if not isinstance(s, A.ExprStmt):
        return s
    e = s.expr
    target = None
    if isinstance(e, A.Assign):
        target = e.target
    elif isinstance(e, A.Unary) and e.op in ("pre++", "pre--", "post++", "post--"):
        target = e.operand
    if not (isinstance(target, A.Ternary) and isinstance(target.cond, A.Name)
            and target.cond.name == flag):  # fmt: skip
        return s
    if isinstance(e, A.Assign):
        then = dataclasses.replace(e, target=target.then)
        else_ = dataclasses.replace(e, target=target.else_)
    else:
        then = dataclasses.replace(e, operand=target.then)  # type: ignore[arg-type]
        else_ = dataclasses.replace(e, operand=target.else_)  # type: ignore[arg-type]
    return A.If(
        loc=s.loc,
        cond=target.cond,
        then=A.ExprStmt(loc=s.loc, expr=then),
        else_=A.ExprStmt(loc=s.loc, expr=else_),
    )


def _map(x: object, expr: Callable[[A.Expr], A.Expr], stmt: Callable[[A.Stmt], A.Stmt]) -> object:
    """``x`` rebuilt bottom-up, each expression passed through ``expr`` and each statement
    through ``stmt`` once its parts are rebuilt (a statement's identity is kept for ``stmt``
    to recognise where nothing under it changed)."""
    if isinstance(x, tuple):
        return tuple(_map(y, expr, stmt) for y in x)
    if not isinstance(x, A.Node):
        return x
    changes = {}
    for f in dataclasses.fields(x):
        if f.name in ("loc", "ty", "to", "of"):
            continue
        old = getattr(x, f.name)
        new = _map(old, expr, stmt)
        if new is not old:
            changes[f.name] = new
    out = dataclasses.replace(x, **changes) if changes else x
    if isinstance(out, A.Expr):
        return expr(out)
    if isinstance(out, A.Stmt):
        return stmt(out)
    return out
