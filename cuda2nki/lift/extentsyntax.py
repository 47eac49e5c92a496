"""Kernel-syntax facts an extent scan needs: how often and where locals are assigned (in a branch,
in a loop), a pointer bump's amount, an early-exit guard, the width a cast pointer covers, and
the sub-expressions of an expression."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

#: calls that store through their first (pointer) argument: __stcs, atomicAdd, store128, ...
_STORE_RE = re.compile(r"^(__st[a-z]*|atomic\w*|\w*[Ss]tore\w*)$")


def _assign_counts(fn: A.Function) -> dict[str, int]:
    """Local name -> how often it is assigned after its declaration."""
    out: dict[str, int] = {}
    for n in walk(fn.body):
        t = None
        if isinstance(n, A.Assign):
            t = n.target
        elif isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--"):
            t = n.operand
        if isinstance(t, A.Name):
            out[t.name] = out.get(t.name, 0) + 1
    for n in walk(fn.body):  # loop variables are assigned by their loop (bounded separately)
        if isinstance(n, A.For):
            for s in n.init:
                if isinstance(s, A.VarDecl):
                    out.pop(s.name, None)
    return out


def _branch_assigned(fn: A.Function) -> set[str]:
    """Names declared outside an ``if`` / ``switch`` / ``?:`` branch and assigned inside it."""
    out: set[str] = set()
    for st in walk(fn.body):
        if isinstance(st, A.If):
            out |= _assigned_in(st.then) | _assigned_in(st.else_)
        elif isinstance(st, A.Switch | A.Ternary):
            out |= _assigned_in(st)
    return out


def _loop_assigned(fn: A.Function) -> set[str]:
    """Names declared outside a loop body and assigned inside it (or by the loop's step): their
    value changes per iteration."""
    out: set[str] = set()
    for loop in walk(fn.body):
        if isinstance(loop, A.For | A.While | A.DoWhile):
            own: set[str] = set()
            if isinstance(loop, A.For):  # a variable the loop declares lives in the loop only
                own = {s.name for s in loop.init if isinstance(s, A.VarDecl)}
            out |= _assigned_in(loop.body) - own
            if isinstance(loop, A.For) and loop.step is not None:
                out |= _assigned_in(loop.step, declared=False) - own
    return out


def _assigned_in(node: object, declared: bool = True) -> set[str]:
    """Names assigned (``=``, compound, ``++``) under ``node``, less those it declares."""
    if node is None:
        return set()
    names: set[str] = set()
    local: set[str] = set()
    for n in walk(node):
        t = None
        if isinstance(n, A.Assign):
            t = n.target
        elif isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--"):
            t = n.operand
        elif isinstance(n, A.VarDecl) and declared:
            local.add(n.name)
        if isinstance(t, A.Name):
            names.add(t.name)
    return names - local


def _bump_amount(e: A.Assign, p: str) -> A.Expr | None:
    """``s`` of ``p += s`` or ``p = p + s`` / ``p = s + p``."""
    if e.op == "+=":
        return e.value
    v = e.value
    if e.op != "=" or not isinstance(v, A.Binary) or v.op != "+":
        return None
    if isinstance(v.left, A.Name) and v.left.name == p:
        return v.right
    if isinstance(v.right, A.Name) and v.right.name == p:
        return v.left
    return None


def _early_exit(st: A.Stmt) -> A.Expr | None:
    """The condition of ``if (c) return;`` (a guard for what follows)."""
    if not isinstance(st, A.If) or st.else_ is not None:
        return None
    body = st.then
    while isinstance(body, A.Block) and len(body.body) == 1:
        body = body.body[0]
    return st.cond if isinstance(body, A.Return) and body.value is None else None


def _ptr_first(e: A.Binary) -> tuple[A.Expr, A.Expr]:
    if isinstance(e.right.ty, A.PointerType) and not isinstance(e.left.ty, A.PointerType):
        return e.right, e.left
    return e.left, e.right


def in_scalars(shape: list, ptr: A.CType | None) -> list:
    """A shape counted in elements of the pointer's own type, as the binding counts it: in
    scalars, a vector (or struct) pointee's lanes (bytes) a last axis of its width."""
    pointee = ptr.pointee if isinstance(ptr, A.PointerType) else None
    if type(pointee) is A.VectorType and pointee.width > 1:
        return [*shape, pointee.width]
    return shape


def _width(to: A.CType, base: A.CType | None) -> int:
    """How many elements of the pointer's own type one element of ``to`` covers (1 when the
    same; 0 when it cannot be told)."""
    if base is None:
        return 1
    if isinstance(to, A.VectorType):
        if isinstance(base, A.ScalarType) and to.base.name == base.name:
            return to.width
        lanes = _per_element(to.base, base)  # `(int4*)floats`: lanes of the same width
        return to.width * lanes if lanes == 1 else 0
    if isinstance(to, A.ScalarType) and isinstance(base, A.ScalarType):
        return 1 if to.name == base.name else _per_element(to, base)
    return 0


def _per_element(to: A.ScalarType, base: A.CType) -> int:
    """How many elements of ``base`` one ``to`` covers when it is as wide or a whole multiple
    wider (``(unsigned*)floats`` 1, ``(long long*)ints`` 2); 0 otherwise (a narrower view is
    :mod:`cuda2nki.lift.byteview`'s)."""
    from cuda2nki.lift.byteview import bits

    wide, own = bits(to), bits(base)
    if wide is None or own is None or wide < own or wide % own:
        return 0
    return wide // own


def _expr_children(e: A.Expr) -> Iterator[A.Expr]:
    for f in ("left", "right", "operand", "value", "cond", "then", "else_", "base", "index"):
        k = getattr(e, f, None)
        if isinstance(k, A.Expr):
            yield k
    for f in ("args", "exprs", "items"):
        for k in getattr(e, f, ()) or ():
            if isinstance(k, A.Expr):
                yield k
