"""Generic rewrites of value DAGs: bottom-up and outermost-first rewriting, and mapping a
function over every index polynomial and condition of a value."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly


def _rewrite_dag(e: V.DExpr, fn, memo: dict) -> V.DExpr:
    """Bottom-up rewrite visiting each shared subtree once (``fn``: replacement or None)."""
    got = memo.get(e)
    if got is None:
        V.spend()
        kids = V.children(e)
        n = e
        if kids:
            new = tuple(_rewrite_dag(k, fn, memo) for k in kids)
            if any(x is not y for x, y in zip(new, kids)):
                n = V.rebuild(e, new)
        r = fn(n)
        got = memo[e] = n if r is None else r
    return got


def _rewrite_outer(e: V.DExpr, fn, memo: dict) -> V.DExpr:
    """Top-down rewrite visiting each shared subtree once: ``fn`` sees a node before its
    children (a whole chain of staged pieces before its tail), and again once they changed."""
    got = memo.get(e)
    if got is None:
        V.spend()
        got = fn(e)
        if got is None:
            kids = V.children(e)
            new = tuple(_rewrite_outer(k, fn, memo) for k in kids)
            got = e
            if any(x is not y for x, y in zip(new, kids)):
                got = V.rebuild(e, new)
                got = fn(got) or got
        memo[e] = got
    return got


def _all_polys(e: V.DExpr) -> list:
    out = []
    for n in V.walk(e):
        if isinstance(n, V.Load):
            out.append((n, n.index))
        elif isinstance(n, V.IntVal):
            out.append((n, n.poly))
        elif isinstance(n, V.Pred):
            for c in _cmps(n.cond):
                out.append((n, c.poly))
        elif isinstance(n, V.Fold):
            out.append((n, n.stop))
        elif isinstance(n, V.SRead):
            out.extend((n, i) for i in n.index)
    return out


def _cmps(c: Cond) -> list:
    if c.kind == "cmp":
        return [c.cmp]
    out = []
    for a in c.args:
        out.extend(_cmps(a))
    return out


def _map_cond(c: Cond, fn) -> Cond:
    if c.kind == "cmp":
        return Cond.of(af.Cmp(fn(c.cmp.poly), c.cmp.op))
    if c.kind in ("and", "or"):
        return Cond(c.kind, tuple(_map_cond(a, fn) for a in c.args))
    return c


def _map_index(p: Poly, fn) -> Poly:
    """``fn`` applied to an index, and inside the values its gather atoms stand for."""
    rep = {}
    for a in p.top_atoms():
        if isinstance(a, af.OpaqueAtom) and isinstance(a.payload, V.DExpr):
            new = _map_polys(a.payload, fn)
            if new != a.payload:
                rep[a] = Poly.atom(V.opaque_of(new))
    return fn(p.subs(rep) if rep else p)


def _map_polys(e: V.DExpr, fn) -> V.DExpr:
    def f(n: V.DExpr) -> V.DExpr | None:
        if isinstance(n, V.Load):
            return V.Load(n.dtype, n.tensor, _map_index(n.index, fn))
        if isinstance(n, V.IntVal):
            return V.IntVal(n.dtype, _map_index(n.poly, fn))
        if isinstance(n, V.Pred):
            return V.Pred(n.dtype, _map_cond(n.cond, fn))
        if isinstance(n, V.Fold):
            return V.Fold(n.dtype, n.op, n.var, n.start, fn(n.stop), n.step, n.body)
        return None

    return V.transform(e, f)
