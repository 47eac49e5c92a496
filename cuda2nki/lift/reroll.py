"""Re-rolling an unrolled loop's stores.

A loop that indexes a local array with its variable is unrolled (every element is its own
value).  When each iteration stored the same thing up to an offset that grows by the same amount
per iteration (``C[(8*ty + r)*N + col] = acc[r]`` for ``r = 0..7``), the stores are one store
inside a loop again: the template is found from the first two iterations (every index polynomial
``p0 + (p1 - p0)*r``) and checked against every iteration.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly


def anti_unify(a: object, b: object, var: Poly) -> object | None:
    """``t`` with ``t[var=0] == a`` and ``t[var=1] == b`` where ``a`` and ``b`` differ only in
    their index polynomials; None when they differ otherwise."""
    if isinstance(a, Poly):
        if not isinstance(b, Poly):
            return None
        d = b - a
        return a if d == af.ZERO else a + d * var
    if type(a) is not type(b):
        return None
    if isinstance(a, tuple):
        if len(a) != len(b):
            return None
        out = []
        for x, y in zip(a, b):
            t = anti_unify(x, y, var)
            if t is None and not (x is None and y is None):
                return None
            out.append(t)
        return tuple(out)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        kw = {}
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if x is None and y is None:
                kw[f.name] = None
                continue
            t = anti_unify(x, y, var)
            if t is None:
                return None
            kw[f.name] = t
        return dataclasses.replace(a, **kw)
    return a if a == b else None


def instantiate(t: object, name: str, k: int) -> object:
    """The template ``t`` at ``var = k``."""
    if isinstance(t, Poly):
        return t.subs({name: k})
    if isinstance(t, Cond):
        return t.subs({name: Poly.const(k)})
    if isinstance(t, V.DExpr):
        return V.subs_poly(t, {name: Poly.const(k)})
    return t


def reroll(groups: list[list], name: str) -> list | None:
    """One template per store of an iteration (index, value and guard as functions of ``name``,
    the iteration number), or None when the iterations are not one store shifted."""
    if len(groups) < 2 or any(len(g) != len(groups[0]) for g in groups) or not groups[0]:
        return None
    var = af.sym(name)
    out = []
    for pos, first in enumerate(groups[0]):
        second = groups[1][pos]
        if (first.tensor, first.loops, first.accumulate) != (
            second.tensor,
            second.loops,
            second.accumulate,
        ):
            return None
        parts = [anti_unify(getattr(first, f), getattr(second, f), var) for f in _FIELDS]
        if any(p is None for p in parts):
            return None
        for k, g in enumerate(groups):
            st = g[pos]
            if (st.tensor, st.loops, st.accumulate) != (
                first.tensor,
                first.loops,
                first.accumulate,
            ):
                return None
            if any(instantiate(p, name, k) != getattr(st, f) for p, f in zip(parts, _FIELDS)):
                return None
        out.append(dict(zip(_FIELDS, parts)))
    return out


_FIELDS = ("index", "value", "guard")
