"""What the scalarisation (:mod:`cuda2nki.lift.literal.scalarise`) reads of the CUDA AST:
which types are vectors, structs held as bytes or pointers to vectors, where a kernel uses them,
which functions store to memory or write through a reference parameter, and the small
constructors of the scalar expressions it writes."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.asynccopy import is_sync_object

_INT = A.ScalarType(name="int32")


def is_vec(t: object) -> bool:
    return type(t) is A.VectorType and not is_sync_object(t)


def is_blob(t: object) -> bool:
    """A struct the front end holds as its bytes (members of different types, a union, a bit
    field, a pointer member): a ``uint8`` vector named after the struct."""
    return (
        type(t) is A.VectorType
        and t.base.name == "uint8"
        and t.align > 1
        and not re.fullmatch(r"u?char[1-4]", t.name)
    )


def blob_use(fn: A.Function) -> tuple[str, object] | None:
    """(struct name, node) of the first use of a struct held as bytes in ``fn``."""
    found: list[tuple[str, object]] = []

    def typ(t: object) -> A.VectorType | None:
        while isinstance(t, A.PointerType | A.ArrayType):
            t = t.pointee if isinstance(t, A.PointerType) else t.elem
        return t if is_blob(t) else None  # type: ignore[return-value]

    def visit(x: object) -> None:
        if found:
            return
        for attr in ("ty", "to", "of"):
            got = typ(getattr(x, attr, None)) if isinstance(x, A.Node) else None
            if got is not None:
                found.append((got.name, x))
                return
        children(x, visit)

    visit(fn.params)
    visit(fn.body)
    return found[0] if found else None


def vec_ptr(t: object) -> A.VectorType | None:
    if isinstance(t, A.PointerType) and is_vec(t.pointee):
        return t.pointee  # type: ignore[return-value]
    return None


def vec_array(t: object) -> A.VectorType | None:
    if isinstance(t, A.ArrayType) and is_vec(t.elem):
        return t.elem  # type: ignore[return-value]
    return None


def mentions_vectors(node: object) -> bool:
    """Whether any type in ``node`` (an AST subtree) is a vector type."""
    if is_vec(node):
        return True
    if isinstance(node, A.PointerType):
        return mentions_vectors(node.pointee)
    if isinstance(node, A.ArrayType):
        return mentions_vectors(node.elem)
    if isinstance(node, tuple):
        return any(mentions_vectors(x) for x in node)
    if dataclasses.is_dataclass(node) and isinstance(node, A.Node):
        return any(mentions_vectors(getattr(node, f.name)) for f in dataclasses.fields(node))
    return False


def lane_name(name: str, k: int, width: int) -> str:
    return f"{name}__{'xyzw'[k] if width <= 4 else k}"


def int_lit(v: int, loc: object) -> A.IntLit:
    return A.IntLit(loc=loc, value=v, ty=_INT)  # type: ignore[arg-type]


def scaled(i: A.Expr, w: int, k: int = 0) -> A.Expr:
    """``w*i + k`` (folded for a literal ``i``)."""
    if isinstance(i, A.IntLit):
        return int_lit(w * i.value + k, i.loc)
    e: A.Expr = A.Binary(loc=i.loc, op="*", left=int_lit(w, i.loc), right=i, ty=i.ty)
    if k:
        e = A.Binary(loc=i.loc, op="+", left=e, right=int_lit(k, i.loc), ty=i.ty)
    return e


def scalar_of(v: A.VectorType) -> A.ScalarType:
    return dataclasses.replace(v.base, const=False) if v.base.const else v.base


def writes_memory(
    fn: A.Function,
    refs: frozenset[str] = frozenset(),
    tu: A.TranslationUnit | None = None,
    depth: int = 0,
) -> bool:
    """Whether ``fn`` (or a function it calls) stores to memory (a write to its own locals
    and by-value parameters, members and elements of them included, is not a store, nor one
    through ``refs``, nor a callee's through references to them)."""
    own = {p.name for p in fn.params if not isinstance(p.ty, A.PointerType)} | set(refs)
    pointers = {
        p.name for p in fn.params if isinstance(p.ty, A.PointerType)
    }  # moving one: no store
    hit = False

    def callee_writes(e: A.Call) -> bool:
        g = None if tu is None else next((f for f in tu.functions if f.name == e.target), None)
        if g is None or depth > 8:
            return True
        passed = frozenset(
            p.name
            for p, a in zip(g.params, e.args)
            if isinstance(a, A.Unary) and a.op == "&" and is_own(a.operand, own)
        )
        return writes_memory(g, passed, tu, depth + 1)

    def visit(x: object) -> None:
        nonlocal hit
        if isinstance(x, A.VarDecl) and x.storage == "local":
            (pointers if isinstance(x.ty, A.PointerType) else own).add(x.name)
        elif isinstance(x, A.Assign):
            hit = hit or not (is_own(x.target, own) or _names(x.target, pointers))
        elif isinstance(x, A.Unary) and x.op.endswith(("++", "--")):
            hit = hit or not (is_own(x.operand, own) or _names(x.operand, pointers))
        elif isinstance(x, A.Call) and x.func.startswith("atomic"):
            hit = True
        elif isinstance(x, A.Call) and x.target is not None:
            hit = hit or callee_writes(x)
        children(x, visit)

    visit(fn.body)
    return hit


def _names(e: A.Expr, names: set[str]) -> bool:
    """Whether ``e`` is one of the variables ``names`` itself (not what it points to)."""
    return isinstance(e, A.Name) and e.name in names


def is_own(e: A.Expr, own: set[str]) -> bool:
    while isinstance(e, A.Member | A.Index) and not (isinstance(e, A.Member) and e.arrow):
        if isinstance(e, A.Index) and isinstance(e.base.ty, A.PointerType):
            return False
        e = e.base
    if isinstance(e, A.Unary) and e.op == "*" and isinstance(e.operand, A.Name):
        e = e.operand if e.operand.name in own and isinstance(e.operand.ty, A.PointerType) else e
    return isinstance(e, A.Name) and e.name in own


def arrows_as_derefs(fn: A.Function) -> A.Function:
    """``fn`` with ``p->f`` spelled ``(*p).f`` (the same in C), so that a reference and a
    pointer to one value are handled alike."""

    def fix(x: object) -> object:
        if isinstance(x, tuple):
            return tuple(fix(y) for y in x)
        if not isinstance(x, A.Node):
            return x
        changes = {
            f.name: fix(getattr(x, f.name)) for f in dataclasses.fields(x) if f.name != "loc"
        }
        x = dataclasses.replace(x, **changes)
        if isinstance(x, A.Member) and x.arrow and isinstance(x.base.ty, A.PointerType):
            star = A.Unary(loc=x.loc, op="*", operand=x.base, ty=x.base.ty.pointee)
            return dataclasses.replace(x, base=star, arrow=False)
        return x

    if not has_arrow(fn.body):
        return fn
    return fix(fn)  # type: ignore[return-value]


def has_arrow(body: A.Stmt) -> bool:
    hit = False

    def visit(x: object) -> None:
        nonlocal hit
        hit = hit or (isinstance(x, A.Member) and x.arrow)
        children(x, visit)

    visit(body)
    return hit


def root_deref(e: A.Expr) -> str | None:
    """The reference parameter ``p`` of a target ``*p``, ``(*p).x``, ``(*p)[k]``."""
    while isinstance(e, A.Member | A.Index) and not (isinstance(e, A.Member) and e.arrow):
        e = e.base
    if isinstance(e, A.Unary) and e.op == "*" and isinstance(e.operand, A.Name):
        return e.operand.name
    return None


def written(body: A.Stmt, name: str) -> bool:
    hit = False

    def visit(x: object) -> None:
        nonlocal hit
        if isinstance(x, A.Assign):
            hit = hit or root_deref(x.target) == name
        elif isinstance(x, A.Unary) and x.op.endswith(("++", "--")):
            hit = hit or root_deref(x.operand) == name
        children(x, visit)

    visit(body)
    return hit


def deref_only(body: A.Stmt, name: str) -> bool:
    """Whether every use of ``name`` in ``body`` is ``*name``."""
    ok = True

    def visit(x: object) -> None:
        nonlocal ok
        if isinstance(x, A.Unary) and x.op == "*" and isinstance(x.operand, A.Name):
            return
        if isinstance(x, A.Name) and x.name == name:
            ok = False
        children(x, visit)

    visit(body)
    return ok


def fn_param_type(fn: A.Function, name: str) -> A.ScalarType:
    p = next(p for p in fn.params if p.name == name)
    return dataclasses.replace(p.ty.pointee, const=False)  # type: ignore[union-attr]


def children(x: object, f: Callable[[object], None]) -> None:
    if isinstance(x, tuple):
        for y in x:
            f(y)
    elif isinstance(x, A.Node):
        for fl in dataclasses.fields(x):
            if fl.name != "loc":
                f(getattr(x, fl.name))


def names_in(x: object) -> set[str]:
    out: set[str] = set()

    def visit(y: object) -> None:
        if isinstance(y, A.Name):
            out.add(y.name)
        children(y, visit)

    visit(x)
    return out


def passes_address(body: A.Stmt) -> bool:
    """Whether a call in ``body`` passes ``&name`` (a local to a reference parameter) or
    ``&arr[i]`` (an element of an array or a lane of a vector declared there)."""
    hit = False
    arrays: set[str] = set()

    def local_element(a: A.Expr) -> bool:
        if not isinstance(a, A.Index):
            return False
        while isinstance(a, A.Index):
            a = a.base
        return isinstance(a, A.Name) and a.name in arrays

    def visit(x: object) -> None:
        nonlocal hit
        if (
            isinstance(x, A.VarDecl)
            and x.storage == "local"
            and isinstance(x.ty, A.ArrayType | A.VectorType)
        ):
            arrays.add(x.name)
        if isinstance(x, A.Call) and x.target is not None:
            hit = hit or any(
                isinstance(a, A.Unary)
                and a.op == "&"
                and (isinstance(a.operand, A.Name) or local_element(a.operand))
                for a in x.args
            )
        children(x, visit)

    visit(body)
    return hit


def uses_vectors(tu: A.TranslationUnit, fn: A.Function) -> bool:
    seen: set[str] = set()
    todo = [fn]
    while todo:
        f = todo.pop()
        if f.name in seen:
            continue
        seen.add(f.name)
        if mentions_vectors(f) or passes_address(f.body):
            return True
        called: set[str] = set()

        def visit(x: object, called: set[str] = called) -> None:
            if isinstance(x, A.Call) and x.target:
                called.add(x.target)
            children(x, visit)

        visit(f.body)
        todo.extend(g for g in tu.functions if g.name in called)
    return False
