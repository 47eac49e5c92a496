"""A kernel's local copy of its struct parameter reads the parameter itself.

``Params q = p;`` (or ``const Params q = *p;`` of a struct of device pointers) is written by
the front end member by member: ``q__n = p__n; q__out = p__out; ...``.  Where each such local
is set once, from a parameter the kernel never assigns, every use of the local is a use of
the parameter: the local is replaced by it, so that guards and indices name the kernel's own
size and pointer parameters (``i < p__n`` bounds ``p__out``, as it does without the copy).
Only the locals the front end made for the members of a struct (names with ``__``) are
replaced.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.rewrite import transform


def fold_param_copies(fn: A.Function) -> A.Function:
    """``fn`` with each member local copied once from an unchanged parameter replaced by
    that parameter."""
    params = {p.name: p.ty for p in fn.params}
    assigned = _assign_counts(fn.body)
    pairs: dict[str, str] = {}
    drop: set[int] = set()
    seen: set[str] = set()  # names used by a statement before their copy
    declared = {
        s.name
        for s in fn.body.body
        if isinstance(s, A.VarDecl) and s.init is None and "__" in s.name
    }
    for k, s in enumerate(fn.body.body):
        got = _copy(s)
        if got is not None:
            local, param = got
            if (
                local in declared
                and local not in seen
                and param in params
                and assigned.get(local) == 1
                and not assigned.get(param)
                and _same(params[param], s.expr.target.ty)  # type: ignore[attr-defined]
            ):
                pairs[local] = param
                drop.add(k)
                continue
        if not isinstance(s, A.VarDecl):
            seen |= {n.name for n in walk(s) if isinstance(n, A.Name)}
    if not pairs:
        return fn
    body = [
        s
        for k, s in enumerate(fn.body.body)
        if k not in drop and not (isinstance(s, A.VarDecl) and s.name in pairs)
    ]

    def swap(e: object) -> object:
        if isinstance(e, A.Name) and e.name in pairs:
            return dataclasses.replace(e, name=pairs[e.name], ty=params[pairs[e.name]])
        return e

    new = transform(dataclasses.replace(fn.body, body=tuple(body)), swap)
    return dataclasses.replace(fn, body=new)


def _copy(s: object) -> tuple[str, str] | None:
    """(local, parameter) of ``local = parameter;``."""
    if not (isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Assign) and s.expr.op == "="):
        return None
    t, v = s.expr.target, s.expr.value
    if isinstance(t, A.Name) and isinstance(v, A.Name) and "__" in t.name:
        return t.name, v.name
    return None


def _assign_counts(body: A.Block) -> dict[str, int]:
    """How often each name is assigned, incremented, declared or has its address taken."""
    out: dict[str, int] = {}
    for n in walk(body):
        target = None
        if isinstance(n, A.Assign):
            target = n.target
        elif isinstance(n, A.Unary) and (n.op.endswith(("++", "--")) or n.op == "&"):
            target = n.operand
        if isinstance(target, A.Name):
            out[target.name] = out.get(target.name, 0) + 1
    return out


def _same(a: A.CType, b: A.CType | None) -> bool:
    def bare(t: object) -> object:
        if isinstance(t, A.PointerType):
            return ("ptr", bare(t.pointee))
        return dataclasses.replace(t, const=False) if hasattr(t, "const") else t  # type: ignore[arg-type]

    return b is not None and bare(a) == bare(b)
