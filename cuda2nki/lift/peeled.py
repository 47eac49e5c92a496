"""A fold whose first (or last) step CUDA wrote out before (after) its loop, joined back.

A block reduced through per-warp results often starts its final loop from warp 0's value::

    float v = part[0];
    for (int i = 1; i < warps; i++) v = fmaxf(v, part[i]);

which executes to ``max(P(0), fold(max, t < warps - 1: P(1 + t)))``, ``P(w)`` warp ``w``'s own
fold over its lanes.  The leaf outside is the fold's body one step before its start, so the two
are one fold over ``t < warps``: ``fold(max, t < warps: P(t))`` -- the form the fold fusion and
the recognisers take (the peeled form has no schedule of its own).  The same holds for a step
written after the loop (the body at the fold's stop), and for ``add`` (a sum is then added in
another order than the CUDA kernel's: rounding only) and ``min``.

The leaf and the shifted body are compared up to the names of their own folds' variables.
"""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Poly

_COMB = ("add", "max", "min")


def join_peeled(leaves: list, op: str) -> list | None:
    """``leaves`` of an ``op`` combination with one peeled step merged into its fold (the
    first such pair found), or None when there is none."""
    for k, fold in enumerate(leaves):
        if not (isinstance(fold, V.Fold) and fold.op == op and fold.step == af.ONE):
            continue
        for j, leaf in enumerate(leaves):
            if j == k or V.has_carried(leaf):
                continue
            joined = _join(fold, leaf)
            if joined is not None:
                rest = [x for i, x in enumerate(leaves) if i not in (j, k)]
                return [joined, *rest]
    return None


def _join(f: V.Fold, leaf: V.DExpr) -> V.Fold | None:
    before = f.start - af.ONE
    if _same(_at(f, before), leaf):  # the step before the first
        t = af.sym(f.var)
        body = V.simplify(V.subs_poly(f.body, {f.var: t + before}))
        return V.Fold(f.dtype, f.op, f.var, af.ZERO, f.stop - before, af.ONE, body)
    if _same(_at(f, f.stop), leaf):  # the step after the last
        return V.Fold(f.dtype, f.op, f.var, f.start, f.stop + af.ONE, af.ONE, f.body)
    return None


def _at(f: V.Fold, value: Poly) -> V.DExpr:
    return V.simplify(V.subs_poly(f.body, {f.var: value}))


def _same(a: V.DExpr, b: V.DExpr) -> bool:
    if a == b:
        return True
    return _alpha(a) == _alpha(V.simplify(b))


def _alpha(e: V.DExpr, depth: int = 0) -> V.DExpr:
    """``e`` with each fold's variable renamed by its nesting depth."""
    if isinstance(e, V.Fold):
        name = f"%peel{depth}"
        body = V.subs_poly(e.body, {e.var: af.sym(name)})
        return V.Fold(e.dtype, e.op, name, e.start, e.stop, e.step, _alpha(body, depth + 1))
    kids = V.children(e)
    if not kids:
        return e
    return V.rebuild(e, tuple(_alpha(x, depth) for x in kids))
