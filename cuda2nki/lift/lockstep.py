"""For loops that step several variables in lockstep, as one counted loop.

``for (int a = a0, b = b0; a <= a_end; a += sa, b += sb) body`` (the tiled matrix product of the
CUDA samples walks A's and B's tiles so) has one loop variable that the condition tests -- the
lead ``a`` -- and followers that only move with it.  Each follower is a function of the lead::

    b == b0 + ((a - a0) / sa) * sb        (exact: a - a0 is a multiple of sa)

so the loop is rewritten to a loop over a trip counter ``t = 0, 1, ...``, every variable declared
at the top of the body as ``v0 + t * sv`` and the condition read at ``a = a0 + t * sa`` (the
starts and steps are saved before the loop, so they are evaluated once, as in the original).  Only loops whose variables are declared in the loop's own
initialisation (they do not outlive it), whose steps are ``+=``/``-=``/``++``/``--`` of values
the body does not change, and whose followers the body does not assign are rewritten.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.lift import control


def split_lockstep(s: A.For, assigned: set[str]) -> A.Stmt | None:
    """The rewritten loop, or None when ``s`` is not such a loop (``assigned``: the names the
    body assigns)."""
    if len(s.init) < 2 or s.cond is None or not isinstance(s.step, A.Comma):
        return None
    decls = list(s.init)
    if not all(isinstance(d, A.VarDecl) and d.init is not None for d in decls):
        return None
    names = [d.name for d in decls]
    steps = _steps(s.step, names)
    if steps is None or len(set(names)) != len(names):
        return None
    cond_names = control.names_in(s.cond)
    leads = [n for n in names if n in cond_names]
    if len(leads) != 1 or assigned & set(names):
        return None
    lead = leads[0]
    for e in steps.values():
        if control.names_in(e) & (assigned | set(names)):
            return None
    loc = s.loc
    lead_decl = next(d for d in decls if d.name == lead)
    ty = lead_decl.ty
    saved: list[A.Stmt] = []

    def keep(name: str, what: str, value: A.Expr, vty: A.CType) -> A.Name:
        tmp = f"__c2n_{name}_{what}"
        saved.append(A.VarDecl(loc=loc, name=tmp, ty=vty, init=value))
        return A.Name(loc=loc, ty=vty, name=tmp)

    starts = {d.name: keep(d.name, "start", d.init, d.ty) for d in decls}
    strides = {n: keep(n, "step", e, _ty(e, ty)) for n, e in steps.items()}
    count = f"__c2n_{lead}_trip"
    trip = A.Name(loc=loc, ty=ty, name=count)
    decls_in_body: list[A.Stmt] = []
    for d in decls:
        moved = A.Binary(loc=loc, ty=d.ty, op="*", left=trip, right=strides[d.name])
        value = A.Binary(loc=loc, ty=d.ty, op="+", left=starts[d.name], right=moved)
        decls_in_body.append(A.VarDecl(loc=d.loc, name=d.name, ty=d.ty, init=value))
    at = next(x.init for x in decls_in_body if isinstance(x, A.VarDecl) and x.name == lead)
    cond = _subst(s.cond, lead, at)
    init = A.VarDecl(loc=lead_decl.loc, name=count, ty=ty, init=A.IntLit(loc=loc, ty=ty, value=0))
    step = A.Unary(loc=loc, ty=ty, op="pre++", operand=trip)
    body = A.Block(loc=s.body.loc, body=(*decls_in_body, s.body))
    loop = A.For(loc=loc, init=(init,), cond=cond, step=step, body=body, unroll=s.unroll)
    return A.Block(loc=loc, body=(*saved, loop))


def _subst(e: object, name: str, by: A.Expr) -> object:
    """``e`` with every read of variable ``name`` replaced by ``by``."""
    if isinstance(e, A.Name) and e.name == name:
        return by
    if isinstance(e, tuple):
        return tuple(_subst(x, name, by) for x in e)
    if not isinstance(e, A.Expr):
        return e
    changes = {
        f.name: _subst(getattr(e, f.name), name, by)
        for f in dataclasses.fields(e)
        if f.name not in ("loc", "ty")
    }
    return dataclasses.replace(e, **changes)


def _ty(e: A.Expr, default: A.CType) -> A.CType:
    return e.ty if e.ty is not None else default


def _steps(step: A.Comma, names: list[str]) -> dict[str, A.Expr] | None:
    """Each variable's step as an amount added per iteration (``-=`` negated), or None."""
    out: dict[str, A.Expr] = {}
    for e in step.exprs:
        got = _step(e)
        if got is None or got[0] not in names or got[0] in out:
            return None
        out[got[0]] = got[1]
    return out if set(out) == set(names) else None


def _step(e: A.Expr) -> tuple[str, A.Expr] | None:
    if isinstance(e, A.Unary) and isinstance(e.operand, A.Name):
        if e.op in ("pre++", "post++", "pre--", "post--"):
            one = A.IntLit(loc=e.loc, ty=e.operand.ty, value=1 if "++" in e.op else -1)
            return e.operand.name, one
        return None
    if isinstance(e, A.Assign) and isinstance(e.target, A.Name) and e.op in ("+=", "-="):
        if e.op == "+=":
            return e.target.name, e.value
        return e.target.name, A.Unary(loc=e.loc, ty=e.value.ty, op="-", operand=e.value)
    return None
