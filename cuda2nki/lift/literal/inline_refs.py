"""A device function writing through reference parameters, inlined once into its caller.

``f(d, m, &v)`` with ``void f(const float& d, const float3& m, float3& v)`` writes the caller's
``v`` through ``v``.  A C++ reference is an alias, so the call means the callee's body run with
``*v`` (and ``(*v).x``) spelling the caller's local ``v`` itself; the by-value parameters are
fresh locals initialised from the arguments (in argument order, before the body); the callee's
own locals get fresh names.  The body is placed once in a block, where it is then scalarised
with the caller's locals (:mod:`.scalarise`): one copy of the function per call, not one per
written lane::

    velocity(m, d, &v);         ->   { float3 m__t1 = m; float d__t2 = d;
                                       v.x = m__t1.x / d__t2; v.y = ...; v.z = ...; }

A pointer parameter passed the address of an element or member (``&pts[k]``) and only
dereferenced aliases that lvalue the same way (:func:`lvalue_aliases`).

A reference parameter the callee passes on whole to another function (``step(s)`` inside
``float twice(float& s)``) aliases the caller's local there too: the inlined call passes its
address (``step(&v)``), which is inlined in turn (:func:`alias_only`).

A function returning a value as well (``float s = f(&a, x)``) assigns it to a result local
declared before the block; several ``return``s are first made one (:mod:`.single_exit`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.vecscan import children, deref_only, names_in, written


@dataclasses.dataclass(frozen=True)
class Inlined:
    """The statements of one inlined call (``result``: the local holding its value, if any)."""

    stmts: tuple[A.Stmt, ...]
    result: A.Name | None


def inline_call(
    fn: A.Function,
    call: A.Call,
    aliases: dict[str, A.Expr],
    fresh: Callable[[str], str],
    want: bool,
) -> Inlined:
    """``call`` of ``fn`` (single exit) as statements: ``aliases`` maps each reference parameter
    passed a caller's local to that local (``*p`` is it); ``fresh`` names the callee's locals."""
    rename = {n: fresh(n) for n in _declared(fn)}
    pre: list[A.Stmt] = []
    for p, a in zip(fn.params, call.args):
        if p.name in aliases:
            continue
        ty = dataclasses.replace(p.ty, const=False) if isinstance(p.ty, A.ScalarType) else p.ty
        pre.append(A.VarDecl(loc=call.loc, name=rename[p.name], ty=ty, init=a))
    body = list(_substitute(fn.body, rename, aliases).body)  # type: ignore[union-attr]
    result: A.Name | None = None
    last = body[-1] if body else None
    if isinstance(last, A.Return):
        body.pop()
        if last.value is not None and want:
            result = A.Name(loc=call.loc, name=fresh("res"), ty=fn.return_type)
            body.append(A.ExprStmt(loc=last.loc, expr=A.Assign(
                loc=last.loc, op="=", target=result, value=last.value, ty=fn.return_type)))  # fmt: skip
        elif last.value is not None and not _plain_lvalue(last.value):  # a pure one: dropped
            body.append(A.ExprStmt(loc=last.loc, expr=last.value))
    block = A.Block(loc=call.loc, body=(*pre, *body))
    if result is None:
        return Inlined((block,), None)
    decl = A.VarDecl(loc=call.loc, name=result.name, ty=fn.return_type)
    return Inlined((decl, block), result)


def _declared(fn: A.Function) -> set[str]:
    """The parameters and the locals declared anywhere in ``fn``'s body."""
    out = {p.name for p in fn.params}

    def visit(x: object) -> None:
        if isinstance(x, A.VarDecl):
            out.add(x.name)
        children(x, visit)

    visit(fn.body)
    return out


def _substitute(x: object, rename: dict[str, str], aliases: dict[str, A.Expr]) -> object:
    """``x`` with ``*p`` of an aliased parameter the caller's local and the callee's names
    renamed."""
    if isinstance(x, tuple):
        return tuple(_substitute(y, rename, aliases) for y in x)
    if not isinstance(x, A.Node):
        return x
    if (
        isinstance(x, A.Unary)
        and x.op == "*"
        and isinstance(x.operand, A.Name)
        and x.operand.name in aliases
    ):
        return dataclasses.replace(aliases[x.operand.name], loc=x.loc)
    if isinstance(x, A.Name) and x.name in aliases:  # passed on: the alias's address
        target = aliases[x.name]
        return A.Unary(loc=x.loc, op="&", operand=dataclasses.replace(target, loc=x.loc), ty=x.ty)
    if isinstance(x, A.Name) and x.name in rename:
        return dataclasses.replace(x, name=rename[x.name])
    changes = {
        f.name: _substitute(getattr(x, f.name), rename, aliases)
        for f in dataclasses.fields(x)
        if f.name != "loc"
    }
    if isinstance(x, A.VarDecl) and x.name in rename:
        changes["name"] = rename[x.name]
    return dataclasses.replace(x, **changes)


def lvalue_aliases(fn: A.Function, call: A.Call, changed: set[str]) -> dict[str, A.Expr]:
    """Pointer parameters passed the address of an element or member (``&pts[k]``,
    ``&cells[i].v``) and only dereferenced in ``fn``: each aliases that lvalue, as a reference
    does -- where the lvalue has no side effect and names none of the caller's locals the call
    may change (``changed``), so that it denotes the same object throughout the body."""
    out: dict[str, A.Expr] = {}
    for p, a in zip(fn.params, call.args):
        if not (isinstance(p.ty, A.PointerType) and isinstance(a, A.Unary) and a.op == "&"):
            continue
        if isinstance(a.operand, A.Index | A.Member) and _plain_lvalue(a.operand):
            if not (names_in(a.operand) & changed) and alias_only(fn.body, p.name):
                out[p.name] = a.operand
    return out


def alias_only(body: A.Stmt, name: str) -> bool:
    """Whether every use of the pointer ``name`` in ``body`` is ``*name`` or a whole argument of
    a call of a device function (passed on as the reference it is)."""
    if deref_only(body, name):
        return True
    stripped = _without_pass_on(body, name)
    return deref_only(stripped, name)  # type: ignore[arg-type]


def writes_through(
    fn: A.Function, name: str, callee: Callable[[A.Call], A.Function | None], depth: int = 0
) -> bool:
    """Whether ``fn`` writes through its pointer parameter ``name``: by an assignment, or by
    passing it whole to a device function that writes through that parameter (``callee``
    resolves a call; an unresolved one, or too deep a chain, counts as a write)."""
    if written(fn.body, name):
        return True
    hit = False

    def visit(x: object) -> None:
        nonlocal hit
        if hit:
            return
        if isinstance(x, A.Call) and x.target is not None:
            for k, a in enumerate(x.args):
                if not _whole(a, name):
                    continue
                g = callee(x)
                if g is None or depth >= 8 or k >= len(g.params):
                    hit = True
                else:
                    hit = hit or writes_through(g, g.params[k].name, callee, depth + 1)
        children(x, visit)

    visit(fn.body)
    return hit


def _whole(a: A.Expr, name: str) -> bool:
    """``name`` or ``&*name`` (a reference passed on as a reference)."""
    if isinstance(a, A.Unary) and a.op == "&" and isinstance(a.operand, A.Unary):
        a = a.operand.operand if a.operand.op == "*" else a
    return isinstance(a, A.Name) and a.name == name


def _without_pass_on(x: object, name: str) -> object:
    """``x`` with the whole arguments ``name`` of device function calls dropped."""
    if isinstance(x, tuple):
        return tuple(_without_pass_on(y, name) for y in x)
    if not isinstance(x, A.Node):
        return x
    if isinstance(x, A.Call) and x.target is not None:
        args = tuple(a for a in x.args if not (isinstance(a, A.Name) and a.name == name))
        return dataclasses.replace(x, args=tuple(_without_pass_on(a, name) for a in args))
    changes = {
        f.name: _without_pass_on(getattr(x, f.name), name)
        for f in dataclasses.fields(x)
        if f.name != "loc"
    }
    return dataclasses.replace(x, **changes)


def _plain_lvalue(e: A.Expr) -> bool:
    """Names, literals, arithmetic, element and member access: nothing with an effect."""
    ok = True

    def visit(x: object) -> None:
        nonlocal ok
        if isinstance(x, A.Call | A.Assign) or (
            isinstance(x, A.Unary) and x.op.endswith(("++", "--"))
        ):
            ok = False
        children(x, visit)

    visit(e)
    return ok
