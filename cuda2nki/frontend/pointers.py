"""Pointer variables that move: re-pointed aliases and per-iteration bumps, as fixed pointers.

Real kernels move pointers where the lifter wants each pointer to be one base plus an offset:

* an alias re-pointed in straight-line code (``x = out + idx * C;``, ``A += blockIdx.y * BM * K;``
  on a parameter at the top of the kernel): from the assignment on, the variable is a new,
  never-assigned pointer ``x__1`` declared there;
* a pointer bumped once per trip of a counted loop (``A += BK; B += BK * N;`` per K-tile):
  inside the loop the pointer is the value it had before the loop plus the trip number times
  the bump, ``A__k = A__0 + (k - k0) / step * BK`` (spelled ``(k - k0) * X`` when the bump is
  ``step * X``), and after the loop ``A`` is never read.

Both rewrites keep the kernel's meaning exactly; anything else (a pointer assigned under a
condition, bumped by a varying amount, read after its loop) is left as written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.presence import _map
from cuda2nki.frontend.visit import walk


def _same(a: A.Node, b: A.Node) -> bool:
    """Structural equality ignoring source locations."""
    if type(a) is not type(b):
        return False
    if isinstance(a, A.Name):
        return a.name == b.name  # type: ignore[attr-defined]
    if isinstance(a, (A.IntLit, A.FloatLit, A.BoolLit)):
        return a.value == b.value  # type: ignore[attr-defined]
    for f in dataclasses.fields(a):
        if f.name in ("loc", "ty"):
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, A.Node):
            if not _same(x, y):
                return False
        elif isinstance(x, tuple):
            if len(x) != len(y) or not all(
                _same(p, q) if isinstance(p, A.Node) else p == q for p, q in zip(x, y)
            ):
                return False
        elif x != y:
            return False
    return True


def _rename(node: object, old: str, new: str) -> object:
    def f(n: A.Node) -> A.Node:
        if isinstance(n, A.Name) and n.name == old:
            return dataclasses.replace(n, name=new)
        return n

    return _map(node, f)


def _assigned(node: object, name: str) -> bool:
    return any(
        isinstance(n, A.Assign)
        and isinstance(n.target, A.Name)
        and n.target.name == name
        or isinstance(n, A.Unary)
        and n.op in ("pre++", "pre--", "post++", "post--")
        and isinstance(n.operand, A.Name)
        and n.operand.name == name
        or isinstance(n, A.VarDecl)
        and n.name == name
        for n in walk(node)
    )


def _reads(node: object, name: str) -> bool:
    return any(isinstance(n, A.Name) and n.name == name for n in walk(node))


def _pointer_move(s: A.Stmt, pointers: dict[str, A.CType]) -> tuple[str, A.Expr] | None:
    """(pointer, its new value) of ``p = e;`` / ``p += e;`` / ``p -= e;`` on a pointer."""
    if (
        isinstance(s, A.ExprStmt)
        and isinstance(s.expr, A.Unary)
        and s.expr.op in ("pre++", "post++", "pre--", "post--")
        and isinstance(s.expr.operand, A.Name)
        and s.expr.operand.name in pointers
    ):
        e = s.expr
        one = A.IntLit(loc=e.loc, value=1, ty=A.ScalarType(name="int32"))
        op = "+" if "++" in e.op else "-"
        return e.operand.name, A.Binary(loc=e.loc, op=op, left=e.operand, right=one, ty=e.ty)
    if not (isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Assign)):
        return None
    a = s.expr
    if not isinstance(a.target, A.Name) or a.target.name not in pointers:
        return None
    if a.op == "=":
        return a.target.name, a.value
    if a.op in ("+=", "-="):
        op = a.op[0]
        value = A.Binary(loc=a.loc, op=op, left=a.target, right=a.value, ty=a.target.ty)
        return a.target.name, value
    return None


class _Fresh:
    def __init__(self, taken: set[str]) -> None:
        self.taken = taken

    def __call__(self, base: str, tag: str) -> str:
        k = 1
        while f"{base}__{tag}{k}" in self.taken:
            k += 1
        name = f"{base}__{tag}{k}"
        self.taken.add(name)
        return name


def _straight(body: tuple[A.Stmt, ...], pointers: dict[str, A.CType], fresh: _Fresh) -> tuple:
    """Re-pointing in straight-line code of one block: each move starts a new pointer."""
    out: list[A.Stmt] = []
    rest = list(body)
    while rest:
        s = rest.pop(0)
        move = _pointer_move(s, pointers)
        if move is None or any(
            isinstance(n, A.VarDecl) and n.name == move[0] for n in walk(tuple(rest))
        ):
            out.append(s)
            continue
        name, value = move
        new = fresh(name, "")
        out.append(A.VarDecl(loc=s.loc, name=new, ty=pointers[name], init=value))
        pointers = {**pointers, new: pointers[name]}
        rest = list(_rename(tuple(rest), name, new))  # type: ignore[arg-type]
    return tuple(out)


def _counter(loop: A.For) -> tuple[str, A.Expr, A.Expr] | None:
    """(variable, first value, step) of ``for (int k = k0; k < n; k += step)`` / ``k++``."""
    if len(loop.init) != 1 or loop.step is None:
        return None
    init = loop.init[0]
    if isinstance(init, A.VarDecl) and init.init is not None:
        var, first = init.name, init.init
    elif (
        isinstance(init, A.ExprStmt)
        and isinstance(init.expr, A.Assign)
        and init.expr.op == "="
        and isinstance(init.expr.target, A.Name)
    ):
        var, first = init.expr.target.name, init.expr.value
    else:
        return None
    st = loop.step
    one = A.IntLit(loc=st.loc, value=1, ty=A.ScalarType(name="int32"))
    if isinstance(st, A.Unary) and st.op in ("pre++", "post++") and _is_name(st.operand, var):
        return var, first, one
    if isinstance(st, A.Assign) and st.op == "+=" and _is_name(st.target, var):
        return var, first, st.value
    return None


def _is_name(e: A.Expr, name: str) -> bool:
    return isinstance(e, A.Name) and e.name == name


def _trips(loc: A.SourceLoc, var: str, first: A.Expr, step: A.Expr, amount: A.Expr) -> A.Expr:
    """The offset after ``(var - first) / step`` bumps of ``amount``."""
    int_t = A.ScalarType(name="int32")
    k: A.Expr = A.Name(loc=loc, name=var, ty=int_t)
    if not (isinstance(first, A.IntLit) and first.value == 0):
        k = A.Binary(loc=loc, op="-", left=k, right=first, ty=int_t)
    if isinstance(step, A.IntLit) and step.value == 1:
        return A.Binary(loc=loc, op="*", left=k, right=amount, ty=int_t)
    if _same(step, amount):
        return k
    if isinstance(amount, A.Binary) and amount.op == "*":
        for a, b in ((amount.left, amount.right), (amount.right, amount.left)):
            if _same(a, step):
                return A.Binary(loc=loc, op="*", left=k, right=b, ty=int_t)
    trips = A.Binary(loc=loc, op="/", left=k, right=step, ty=int_t)
    return A.Binary(loc=loc, op="*", left=trips, right=amount, ty=int_t)


def _bumps(loop: A.For, pointers: dict[str, A.CType]) -> dict[str, A.Expr]:
    """Pointers bumped (``p += e``) exactly once at the top level of ``loop``'s body by a
    loop-invariant amount, and assigned nowhere else in the loop."""
    body = loop.body.body if isinstance(loop.body, A.Block) else (loop.body,)
    counter = _counter(loop)
    if counter is None:
        return {}
    found: dict[str, A.Expr] = {}
    for s in body:
        move = _pointer_move(s, pointers)
        if move is None:
            continue
        name, value = move
        if isinstance(value, A.Binary) and value.op == "+" and _is_name(value.left, name):
            found.setdefault(name, value.right)
    changed = {n for n in walk(loop.body) if isinstance(n, A.VarDecl)}
    out: dict[str, A.Expr] = {}
    for name, amount in found.items():
        moves = [s for s in body if _pointer_move(s, {name: pointers[name]})]
        nested = [
            s
            for s in body
            if _pointer_move(s, {name: pointers[name]}) is None and _assigned(s, name)
        ]
        local = {d.name for d in changed}
        if len(moves) != 1 or nested or _reads(amount, counter[0]):
            continue
        if any(_assigned(loop.body, n.name) for n in walk(amount) if isinstance(n, A.Name)):
            continue
        if any(isinstance(n, A.Name) and n.name in local for n in walk(amount)):
            continue
        out[name] = amount
    return out


def _bumped_loop(
    loop: A.For, rest: tuple[A.Stmt, ...], pointers: dict[str, A.CType], fresh: _Fresh
) -> tuple[list[A.Stmt], A.For] | None:
    bumps = {n: e for n, e in _bumps(loop, pointers).items() if not _reads(rest, n)}
    counter = _counter(loop)
    if not bumps or counter is None:
        return None
    var, first, step = counter
    before: list[A.Stmt] = []
    body = list(loop.body.body if isinstance(loop.body, A.Block) else (loop.body,))
    for name, amount in bumps.items():
        ty = pointers[name]
        base = fresh(name, "base")
        before.append(
            A.VarDecl(loc=loop.loc, name=base, ty=ty, init=A.Name(loc=loop.loc, name=name, ty=ty))
        )
        here = fresh(name, "k")
        off = _trips(loop.loc, var, first, step, amount)
        at = A.Binary(
            loc=loop.loc, op="+", left=A.Name(loc=loop.loc, name=base, ty=ty), right=off, ty=ty
        )
        k = next(i for i, s in enumerate(body) if _pointer_move(s, {name: ty}))
        head = _rename(tuple(body[:k]), name, here)
        moved = fresh(name, "")
        bumped = A.Binary(
            loc=body[k].loc,
            op="+",
            left=A.Name(loc=body[k].loc, name=here, ty=ty),
            right=amount,
            ty=ty,
        )
        tail = _rename(tuple(body[k + 1 :]), name, moved)
        body = [
            A.VarDecl(loc=loop.loc, name=here, ty=ty, init=at),
            *head,  # type: ignore[misc]
            A.VarDecl(loc=body[k].loc, name=moved, ty=ty, init=bumped),
            *tail,  # type: ignore[misc]
        ]
    block = A.Block(loc=loop.body.loc, body=tuple(body))
    return before, dataclasses.replace(loop, body=block)


def _block(b: A.Block, pointers: dict[str, A.CType], fresh: _Fresh) -> A.Block:
    local = dict(pointers)
    stmts: list[A.Stmt] = []
    items = list(b.body)
    for i, s in enumerate(items):
        if isinstance(s, A.VarDecl) and isinstance(s.ty, A.PointerType) and s.storage == "local":
            local[s.name] = s.ty
        if isinstance(s, A.For):
            got = _bumped_loop(s, tuple(items[i + 1 :]), local, fresh)
            if got is not None:
                before, s = got
                stmts.extend(before)
        stmts.append(s)
    body = _straight(tuple(stmts), local, fresh)
    return dataclasses.replace(b, body=tuple(_nested(s, local, fresh) for s in body))


def _nested(s: A.Stmt, pointers: dict[str, A.CType], fresh: _Fresh) -> A.Stmt:
    """Blocks inside ``s``, each with the pointers declared in it (outer ones are not moved)."""
    del pointers

    def inner(n: A.Node) -> A.Node:
        return n

    if isinstance(s, A.Block):
        return _block(s, {}, fresh)
    changes: dict[str, object] = {}
    for f in dataclasses.fields(s):
        v = getattr(s, f.name)
        if isinstance(v, A.Block):
            changes[f.name] = _block(v, {}, fresh)
        elif isinstance(v, A.Stmt):
            changes[f.name] = _nested(v, {}, fresh)
    del inner
    return dataclasses.replace(s, **changes) if changes else s


def fix_pointers(fn: A.Function) -> A.Function:
    """``fn`` with re-pointed aliases and per-trip bumps made fixed pointers (see the module)."""
    taken = {n.name for n in walk(fn.body) if isinstance(n, (A.Name, A.VarDecl))}
    taken |= {p.name for p in fn.params}
    fresh = _Fresh(taken)
    params = {p.name: p.ty for p in fn.params if isinstance(p.ty, A.PointerType)}
    return dataclasses.replace(fn, body=_block(fn.body, params, fresh))


def fix_unit(
    tu: A.TranslationUnit, kernel: str, rewrite: Callable[[A.Function], A.Function] = fix_pointers
) -> A.TranslationUnit:
    """``tu`` with :func:`fix_pointers` applied to the kernel ``kernel``."""
    fns = tuple(rewrite(f) if f.name == kernel else f for f in tu.functions)
    return dataclasses.replace(tu, functions=fns)
