"""Loops that repeat the same work become one pass of it (an AST rewrite before the lift).

Timing and tutorial code often makes a kernel heavier by doing its work again and again::

    for (int i = 0; i < 500; i++)
        c[idx] = a[idx] + b[idx];

Every iteration stores the same values to the same places: the body never names the counter,
and nothing it reads is written by it, so after the first iteration the others change nothing.
The loop computes what one pass of its body computes -- when it runs at all::

    c[idx] = a[idx] + b[idx];                       (a constant count of at least one)
    if (0 < n_loop) { y[idx] = alpha * x[idx]; }    (a count known only at run time)

To the lifter the loop is a write conflict (the same element stored once per iteration); the
pass is the plain statement it recognises.  The rewrite applies to a ``for`` loop that declares
its own counter, steps it by one up to a bound that the body does not change, and whose body

* never names the counter;
* holds only plain stores (``=``), local declarations and ``if`` statements -- no compound
  assignment, increment, ``break``, ``continue``, ``return`` or inner loop;
* reads no variable or array that it writes (a local declared inside it is fresh each time);
* calls no function with an effect or a state of its own (atomics, barriers, warp exchanges,
  random numbers, clocks, output) and no user function.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

#: intrinsics a repeated body must not call: each call has an effect or reads a changing state
_EFFECTFUL = re.compile(
    r"atomic|sync|shfl|ballot|__any|__all|activemask|threadfence|printf|assert|rand|clock|"
    r"globaltimer|nanosleep|trap|memcpy|memset|malloc|free"
)


def collapse_repeats(fn: A.Function) -> A.Function:
    """``fn`` with every loop that repeats the same idempotent work replaced by one pass."""
    if fn.body is None:
        return fn
    body = _stmt(fn.body)
    return fn if body is fn.body else dataclasses.replace(fn, body=body)


def _stmt(s: Any) -> Any:
    if isinstance(s, A.For):
        once = _once(s)
        if once is not None:
            return once
    if isinstance(s, A.Block):
        body = tuple(_stmt(x) for x in s.body)
        same = all(a is b for a, b in zip(body, s.body))
        return s if same else dataclasses.replace(s, body=body)
    changes = {}
    for f in ("then", "else_", "body"):
        old = getattr(s, f, None)
        if isinstance(old, A.Stmt):
            new = _stmt(old)
            if new is not old:
                changes[f] = new
    return dataclasses.replace(s, **changes) if changes else s


# --------------------------------------------------------------------------- the loop


def _once(loop: A.For) -> A.Stmt | None:
    """One pass of ``loop``'s body (guarded by the loop's first test unless that is a constant
    true), or None when the loop is not a repeat of idempotent work."""
    head = _counted(loop)
    if head is None:
        return None
    counter, first_test = head
    body = loop.body
    if _mentions(body, counter) or not _idempotent(body):
        return None
    written = _written(body)
    if _names(first_test) & written:
        return None  # the bound moves with the work: not a plain repeat
    value = _constant(first_test)
    if value is False:
        return None  # never runs: leave it to the lifter as written
    block = body if isinstance(body, A.Block) else A.Block(body=(body,), loc=body.loc)
    if value is True:
        return block
    return A.If(cond=first_test, then=block, else_=None, loc=loop.loc)


def _counted(loop: A.For) -> tuple[str, A.Expr] | None:
    """``(counter, test of the first iteration)`` of ``for (T v = s; v < e; v++)`` (``<=``,
    ``e > v``, ``++v``, ``v += 1``, ``v = v + 1``), or None."""
    if len(loop.init) != 1 or not isinstance(loop.init[0], A.VarDecl):
        return None
    decl = loop.init[0]
    if decl.init is None or not isinstance(decl.ty, A.ScalarType) or decl.ty.is_float:
        return None
    v = decl.name
    if not _steps_by_one(loop.step, v):
        return None
    c = loop.cond
    if not isinstance(c, A.Binary):
        return None
    if _is_name(c.left, v) and c.op in ("<", "<=") and not _mentions(c.right, v):
        return v, A.Binary(op=c.op, left=decl.init, right=c.right, ty=c.ty, loc=c.loc)
    if _is_name(c.right, v) and c.op in (">", ">=") and not _mentions(c.left, v):
        return v, A.Binary(op=c.op, left=c.left, right=decl.init, ty=c.ty, loc=c.loc)
    return None


def _steps_by_one(step: A.Expr | None, v: str) -> bool:
    if isinstance(step, A.Unary):
        return step.op in ("pre++", "post++") and _is_name(step.operand, v)
    if isinstance(step, A.Assign) and _is_name(step.target, v):
        if step.op == "+=":
            return _is_int(step.value, 1)
        if step.op == "=" and isinstance(step.value, A.Binary) and step.value.op == "+":
            a, b = step.value.left, step.value.right
            return (_is_name(a, v) and _is_int(b, 1)) or (_is_name(b, v) and _is_int(a, 1))
    return False


def _constant(test: A.Expr) -> bool | None:
    """The value of a comparison of two integer literals, else None."""
    if not (
        isinstance(test, A.Binary)
        and isinstance(test.left, A.IntLit)
        and isinstance(test.right, A.IntLit)
    ):
        return None
    a, b = test.left.value, test.right.value
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}.get(test.op)


# --------------------------------------------------------------------------- the body


def _idempotent(body: A.Stmt) -> bool:
    """Whether running ``body`` twice leaves what running it once leaves (see the module
    docstring for the forms accepted)."""
    if not _plain(body):
        return False
    reads = _reads(body)
    return not (reads & _written(body))


def _plain(s: Any) -> bool:
    if isinstance(s, A.Block):
        return all(_plain(x) for x in s.body)
    if isinstance(s, A.Empty):
        return True
    if isinstance(s, A.VarDecl):
        return s.storage == "local" and _pure(s.init)
    if isinstance(s, A.ExprStmt):
        e = s.expr
        return (
            isinstance(e, A.Assign)
            and e.op == "="
            and _store_target(e.target)
            and _pure(e.value)
            and _pure(e.target)
        )
    if isinstance(s, A.If):
        return _pure(s.cond) and _plain(s.then) and (s.else_ is None or _plain(s.else_))
    return False


def _store_target(t: A.Expr) -> bool:
    return isinstance(t, A.Name) or (isinstance(t, A.Index) and _root(t) is not None)


def _pure(e: A.Expr | None) -> bool:
    """No assignment, increment or effectful call anywhere in ``e``."""
    for n in walk(e):
        if isinstance(n, A.Assign | A.Comma):
            return False
        if isinstance(n, A.Unary) and ("++" in n.op or "--" in n.op):
            return False
        if isinstance(n, A.Call) and (n.target is not None or _EFFECTFUL.search(n.func)):
            return False
    return True


def _written(body: A.Stmt) -> set[str]:
    """Variables and arrays ``body`` stores to, except locals it declares itself."""
    local = {n.name for n in walk(body) if isinstance(n, A.VarDecl)}
    out: set[str] = set()
    for n in walk(body):
        if isinstance(n, A.Assign):
            root = _root(n.target)
            if root is not None and root not in local:
                out.add(root)
    return out


def _reads(body: A.Stmt) -> set[str]:
    """Every name ``body`` reads: operands, conditions and the indices of its stores (the
    array a store writes is not read by the store)."""
    out: set[str] = set()
    for n in walk(body):
        if isinstance(n, A.Assign):
            out |= _names(n.value)
            out |= _index_names(n.target)
        elif isinstance(n, A.VarDecl):
            out |= _names(n.init)
        elif isinstance(n, A.If):
            out |= _names(n.cond)
    return out


def _index_names(t: A.Expr) -> set[str]:
    out: set[str] = set()
    while isinstance(t, A.Index | A.Member):
        if isinstance(t, A.Index):
            out |= _names(t.index)
        t = t.base
    return out


def _root(t: A.Expr) -> str | None:
    while isinstance(t, A.Index | A.Member):
        t = t.base
    return t.name if isinstance(t, A.Name) else None


# --------------------------------------------------------------------------- helpers


def _names(node: Any) -> set[str]:
    return {n.name for n in walk(node) if isinstance(n, A.Name)}


def _mentions(node: Any, name: str) -> bool:
    return name in _names(node)


def _is_name(e: Any, name: str) -> bool:
    return isinstance(e, A.Name) and e.name == name


def _is_int(e: Any, value: int) -> bool:
    return isinstance(e, A.IntLit) and e.value == value
