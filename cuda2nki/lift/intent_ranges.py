"""Value ranges of index expressions at a binding's test points: the box of each variable,
narrowed by the guard's residual and scaled conditions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly


def _value_range(e: V.DExpr, env: dict, ranges: Mapping) -> tuple:
    """Interval of an integer data value at the test point ``env`` (``-inf, inf``: unknown)."""
    inf = math.inf
    if isinstance(e, V.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return (e.value, e.value)
    if isinstance(e, V.IntVal):
        try:
            v = e.poly.evaluate(env)
        except (KeyError, ZeroDivisionError):
            return (-inf, inf)
        return (v, v)
    if isinstance(e, V.Cast):
        return _value_range(e.operand, env, ranges)
    if isinstance(e, V.Load) and e.tensor in ranges:
        lo, hi = ranges[e.tensor]
        try:
            return (lo.evaluate(env), hi.evaluate(env) - 1)
        except (KeyError, ZeroDivisionError):
            return (-inf, inf)
    if isinstance(e, V.Op) and e.op in ("min", "max", "add", "sub") and len(e.args) == 2:
        (alo, ahi), (blo, bhi) = (_value_range(x, env, ranges) for x in e.args)
        if e.op == "min":
            return (min(alo, blo), min(ahi, bhi))
        if e.op == "max":
            return (max(alo, blo), max(ahi, bhi))
        if e.op == "add":
            return (alo + blo, ahi + bhi)
        return (alo - bhi, ahi - blo)
    return (-inf, inf)


def _narrow_by_residual(box: dict, residual: list, extents: Mapping, env: dict) -> None:
    """``v < f(w)`` with ``f`` moving with another axis ``w`` (``s < t % T + 1``): ``v`` stays
    below the largest value of ``f`` over the box."""
    for c in residual:
        if c.op != "<":
            continue
        for v in box:
            if af.coefficient(c.poly, v) != af.ONE:
                continue
            rest = c.poly - af.sym(v)
            if v in rest.atoms():
                continue
            with af.bounds(extents):
                top = af.upper(-rest - 1)  # v <= -rest - 1
            if top is None or top.depends_on(set(extents)):
                continue
            try:
                box[v][1] = min(box[v][1], top.evaluate(env))
            except (KeyError, ZeroDivisionError):
                pass


def _split_cmp(p: Poly) -> tuple[Poly, Poly]:
    """``p < 0`` as ``lhs < rhs`` with positive terms on the left."""
    lhs = Poly(tuple((m, c) for m, c in p.terms if c > 0))
    rhs = Poly(tuple((m, -c) for m, c in p.terms if c < 0))
    return lhs, rhs


def _range(d: Poly, extents: Mapping, env: dict, guard: Cond | None = None):
    """Min/max of an affine index over the axis boxes (and simple guard bounds)."""
    box = {}
    for v, e in extents.items():
        try:
            box[v] = [0, e.evaluate(env) - 1]
        except (KeyError, ZeroDivisionError):
            return None
    if guard is not None:
        dom = af.domain_of(guard, set(extents))
        if dom is not None:
            for v, b in dom.bounds.items():
                if v not in box:
                    continue
                for lo in b.lo:
                    try:
                        box[v][0] = max(box[v][0], lo.evaluate(env))
                    except (KeyError, ZeroDivisionError):
                        pass
                for hi in b.hi:
                    try:
                        box[v][1] = min(box[v][1], hi.evaluate(env) - 1)
                    except (KeyError, ZeroDivisionError):
                        pass
        if dom is not None:
            _narrow_by_residual(box, dom.residual, extents, env)
        _narrow_by_scaled(box, guard, env)
    return _box_range(d, box, env)


def _narrow_by_scaled(box: dict, guard: Cond, env: dict) -> None:
    """``K * v + r < 0`` with a constant ``K`` (a vector of ``K`` lanes starting at ``K * v``
    below a bound): ``v <= (-r - 1) // K`` (``K > 0``) or ``v >= r // -K + 1`` (``K < 0``)."""
    for c in guard.conjuncts() or []:
        if c.op != "<":
            continue
        aff = af.affine(c.poly, set(box))
        if aff is None or len(aff.coeffs) != 1:
            continue
        ((v, k),) = aff.coeffs.items()
        if v not in box or not k.is_const or abs(k.const_value) < 2:
            continue
        try:
            r = aff.const.evaluate(env)
        except (KeyError, ZeroDivisionError):
            continue
        kv = k.const_value
        lo, hi = box[v]
        if kv > 0:  # never past the other end: an empty box proves nothing either way
            box[v][1] = max(lo, min(hi, (-r - 1) // kv))
        else:
            box[v][0] = min(hi, max(lo, r // -kv + 1))


def _box_range(d: Poly, box: dict, env: dict, depth: int = 0) -> tuple[int, int] | None:
    """Min/max of ``d``, affine in the box's axes and in quotients and remainders of such
    non-negative expressions by positive constants (``y / 2 * W + x / 2``: a quotient ranges
    over the quotients of its numerator's range, division being monotone)."""
    aff = af.affine(d, set(box))
    if aff is None:
        return None
    try:
        lo = hi = aff.const.evaluate(env)
        for v, c in aff.coeffs.items():
            got = box.get(v) if v in box else _atom_range(v, box, env, depth)
            if got is None:
                return None
            cv = c.evaluate(env)
            a, b = cv * got[0], cv * got[1]
            lo += min(a, b)
            hi += max(a, b)
    except (KeyError, ZeroDivisionError):
        return None
    return lo, hi


def _atom_range(a: object, box: dict, env: dict, depth: int) -> tuple[int, int] | None:
    if depth > 4 or not isinstance(a, af.DivAtom | af.ModAtom):
        return None
    if not a.den.is_const or a.den.const_value <= 0:
        return None
    num = _box_range(a.num, box, env, depth + 1)
    # a non-negative numerator only: the IR divides by flooring (FloorDiv, Mod), C truncates
    if num is None or num[0] < 0:
        return None
    k = a.den.const_value
    if isinstance(a, af.DivAtom):
        return num[0] // k, num[1] // k
    return (num[0], num[1]) if num[1] < k else (0, k - 1)
