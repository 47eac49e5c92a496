"""Solving index equations: which writer produced an element, and fusing mixed-radix variables.

Both shared-memory resolution ("which thread wrote ``tile[k][tx]``?") and the lowering of thread
coordinates to intent axes ("``blockIdx.x*32 + threadIdx.y + 8*j`` is one axis of extent
``32*gridDim.x``") reduce to the same question: an integer combination ``sum(c_k * u_k)`` of
variables with known extents ``E_k`` where ``c_(k+1) = c_k * E_k`` -- a mixed-radix number.  It is
a bijection onto ``[0, c_last * E_last)``, so it can be inverted digit by digit (``u_k =
(r / c_k) % E_k``) and replaced by a single variable.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Cond, Poly


def radix_order(coeffs: Mapping, extents: Mapping) -> list | None:
    """Order the variables of ``sum(coeffs[u] * u)`` as mixed-radix digits (least significant
    first): the first coefficient is ``c0`` and each next one is the previous times the previous
    variable's extent.  None when no order works.  (A common factor ``c0`` is allowed.)"""
    vs = list(coeffs)
    if len(vs) > 5:
        return None
    perms = (
        itertools.permutations(vs)
        if len(vs) <= 4
        else [sorted(vs, key=lambda v: len(coeffs[v].terms))]
    )
    for order in perms:
        ok = True
        for a, b in zip(order, order[1:]):
            if extents.get(a) is None or coeffs[b] != coeffs[a] * extents[a]:
                ok = False
                break
        if ok:
            return list(order)
    return None


def invert_radix(order: list, coeffs: Mapping, extents: Mapping, r: Poly) -> tuple[dict, list]:
    """Digits of ``r`` (``r = sum(coeffs[u]*u)``): mapping ``u -> expr`` and the conditions for
    ``r`` to be representable (divisible by ``c0``, within range)."""
    c0 = coeffs[order[0]]
    conds: list[Cond] = []
    mapping: dict = {}
    q = af.floordiv(r, c0)
    if c0 != af.ONE:
        conds.append(Cond.of(af.Cmp(af.mod(r, c0), "==")))
    for k, u in enumerate(order):
        if k == len(order) - 1:
            mapping[u] = q
            if extents.get(u) is not None:
                conds.append(Cond.of(af.compare("<", q, extents[u])))
        else:
            mapping[u] = af.mod(q, extents[u])
            q = af.floordiv(q, extents[u])
    conds.append(Cond.of(af.compare(">=", r, af.ZERO)))
    return mapping, conds


def solve_writer(widx: tuple, ridx: tuple, unknowns: Mapping, guard: Cond) -> tuple | None:
    """Values of the writer's ``unknowns`` (atom -> extent or None) with ``widx == ridx``.

    Returns ``(mapping, conditions)``: ``conditions`` say when such a writer exists (in range,
    divisible) and include the write's guard.  Unknowns the equations leave free must not matter:
    the caller checks the value does not depend on them.  None when the equations are not
    invertible (non-linear, not a mixed radix)."""
    unknowns = dict(unknowns)
    widx, ridx, inner = _join_divmod(tuple(widx), tuple(ridx))
    widx, guard, splits = _split_divmod(tuple(widx), guard, unknowns)
    pending: list[Poly] = [w - r for w, r in zip(widx, ridx)]
    pending += [
        c.poly for c in (guard.conjuncts() or []) if c.op == "==" and c.poly.depends_on(unknowns)
    ]
    mapping: dict = {}
    conds: list[Cond] = []
    changed = True
    while changed and pending:
        changed = False
        rest: list[Poly] = []
        for e in pending:
            e = e.subs(mapping) if mapping else e
            free = set(unknowns) - set(mapping)
            aff = af.affine(e, free)
            if aff is None:
                return None
            if not aff.coeffs:
                if e != af.ZERO:
                    conds.append(Cond.of(af.Cmp(e, "==")))
                changed = True
                continue
            coeffs = dict(aff.coeffs)
            if any(k not in free for k in coeffs) or any(
                c.depends_on(unknowns) for c in coeffs.values()
            ):
                rest.append(e)
                continue
            rhs = -aff.const
            if all(_is_negative(c) for c in coeffs.values()):
                coeffs = {k: -v for k, v in coeffs.items()}
                rhs = aff.const
            order = radix_order(coeffs, unknowns) if len(coeffs) > 1 else list(coeffs)
            if order is None:
                rest.append(e)
                continue
            sol, cs = invert_radix(order, coeffs, unknowns, rhs)
            mapping = {k: v.subs(sol) for k, v in mapping.items()}
            mapping.update(sol)
            conds.extend(cs)
            changed = True
        pending = rest
    if pending:
        return None
    for u, ext in unknowns.items():
        if u in mapping:
            conds.append(Cond.of(af.compare(">=", mapping[u], af.ZERO)))
            if ext is not None:
                conds.append(Cond.of(af.compare("<", mapping[u], ext)))
    conds.append(guard.subs(mapping))
    conds.extend(inner)
    for u, (c, q, m) in splits.items():
        mapping[u] = c * mapping.get(q, af.sym(q)) + mapping.get(m, af.sym(m))
    return mapping, af.conj(conds)


def _join_divmod(widx: tuple, ridx: tuple) -> tuple[tuple, tuple, list]:
    """Row-major writes of one flat counter (``tile[L / C][L % C]``, a cooperative strided load
    of a tile): the last two dims as one equation ``L == r0*C + r1``, valid where the read's
    column ``r1`` lies in ``[0, C)`` (returned as conditions)."""
    if len(widx) < 2 or len(widx) != len(ridx):
        return widx, ridx, []
    q, m = widx[-2], widx[-1]
    if len(q.terms) != 1 or len(m.terms) != 1 or q.terms[0][1] != 1 or m.terms[0][1] != 1:
        return widx, ridx, []
    if len(q.terms[0][0]) != 1 or len(m.terms[0][0]) != 1:
        return widx, ridx, []
    (qa,), (ma,) = q.terms[0][0], m.terms[0][0]
    if not (isinstance(qa, af.DivAtom) and isinstance(ma, af.ModAtom)):
        return widx, ridx, []
    if qa.num != ma.num or qa.den != ma.den or not qa.den.is_const:
        return widx, ridx, []
    c, col = qa.den, ridx[-1]
    inner = [Cond.of(af.compare(">=", col, af.ZERO)), Cond.of(af.compare("<", col, c))]
    return widx[:-2] + (qa.num,), ridx[:-2] + (ridx[-2] * c + col,), inner


def _is_negative(c: Poly) -> bool:
    return c.is_const and c.const_value < 0 or (not c.is_const and all(k < 0 for _, k in c.terms))


def _split_divmod(widx: tuple, guard: Cond, unknowns: dict) -> tuple[tuple, Cond, dict]:
    """Replace an unknown ``u`` used as ``u / c`` or ``u % c`` (constant ``c`` dividing ``u``'s
    extent) by ``c*Q + M`` with fresh unknowns ``Q`` (extent ``E/c``) and ``M`` (extent ``c``)."""
    splits: dict = {}
    for u in list(unknowns):
        ext = unknowns[u]
        dens = set()
        for p in list(widx) + [c.poly for c in (guard.conjuncts() or [])]:
            for a in p.atoms():
                if (
                    isinstance(a, (af.DivAtom, af.ModAtom))
                    and a.num == af.Poly.atom(u)
                    and a.den.is_const
                ):
                    dens.add(a.den.const_value)
        if len(dens) != 1:
            continue
        c = dens.pop()
        if ext is None or not ext.is_const or ext.const_value % c:
            continue
        q, m = f"{u}/q", f"{u}/m"
        splits[u] = (c, q, m)
        unknowns.pop(u)
        unknowns[q] = Poly.const(ext.const_value // c)
        unknowns[m] = Poly.const(c)
        sub = {u: c * af.sym(q) + af.sym(m)}
        with af.bounds({m: c, q: ext.const_value // c}):
            widx = tuple(p.subs(sub) for p in widx)
            guard = guard.subs(sub)
    return widx, guard, splits
