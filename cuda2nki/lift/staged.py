"""A shared window staged piece by piece (the block's elements and its halos, each copied
from the same global array under its own bounds test) read back as one guarded load."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly


def _merge_pieces(e: V.DExpr, known: tuple = ()) -> V.DExpr | None:
    """A shared window staged piece by piece (the block's elements and its halos, each copied
    from the same global array under its own bounds test) reads back as one guarded load:
    ``c1 ? (g1 ? x[k1] : p) : c2 ? (g2 ? x[k2] : p) : ... : unwritten`` -> ``g ? x[k] : p``.
    A piece staged by ``if``/``else`` comes as two: ``c1 && g1 ? x[k1] : c1 && !g1 ? p : ...``
    (the bounds tests of a plain load's region are its tests; a constant piece must lie where
    the joined test fails).  ``k`` is the most general piece's index; each piece's bounds test
    is restated on it (a test ``k1 + b < 0`` becomes ``k + b < 0``), and every piece is checked
    to agree with the joined read in its own region (the region's pinned thread coordinates
    substituted, the tests it lacks implied by the region and ``known``, the reader's own
    guard: a halo staged with a one-sided test, ``lo >= 0 ? x[lo] : 0``, is inside the array
    at the other end because the reading thread is).  Unwritten elements are never read by a
    correct kernel (CUDA would read garbage there)."""
    pieces = _pieces(e)
    if pieces is None or len(pieces) < 2:
        return None
    loads: list = []  # (region, tests, load)
    pads: list = []  # regions of constant pieces
    values: set = set()
    for region, v in pieces:
        shape = _guarded_load(v)
        if shape is not None and shape[2] is None:  # a plain load: its region's bounds tests
            tests = [c for c in region.conjuncts() or [] if _restate(c, v.index, v.index)]
            shape = (tests, v, None)
        if shape is not None:
            loads.append((region, shape[0], shape[1]))
            if shape[2] is not None:
                values.add(shape[2])
        elif isinstance(v, V.Const) and v.value == v.value:
            pads.append(region)
            values.add(v.value)
        else:
            return None
    if not loads or len({ld.tensor for _, _, ld in loads}) != 1 or len(values) > 1:
        return None
    load = max((ld for _, _, ld in loads), key=lambda ld: len(ld.index.atoms()))
    joined: list = []
    for _, g, ld in loads:
        for c in g:
            moved = _restate(c, ld.index, load.index)
            if moved is None:
                return None
            if moved not in joined:
                joined.append(moved)
    for region, g, ld in loads:
        if not _agrees(region, g, ld, joined, load, known):
            return None
    if not all(_outside(region, joined, known) for region in pads):
        return None
    if not joined:
        return load if not pads else None
    if not values:
        return None
    cond = V.Pred("bool", af.conj(Cond.of(c) for c in joined))
    return V.Select(load.dtype, cond, load, V.Const(load.dtype, values.pop()))


def _pieces(e: V.DExpr) -> list | None:
    """``c1 ? v1 : c2 ? v2 : ... : rest`` as ``[(c1, v1), (c2, v2), ..., (TRUE, rest)]``; a
    last guarded load is a piece of its own (its test the staged bounds test), and an
    unwritten ``rest`` (NaN) is no piece."""
    if not (isinstance(e, V.Select) and isinstance(e.cond, V.Pred)):
        return None
    pieces: list = []
    rest: V.DExpr = e
    while isinstance(rest, V.Select) and isinstance(rest.cond, V.Pred):
        if pieces and _guarded_load(rest) is not None and not _unwritten(rest.else_):
            break
        pieces.append((rest.cond.cond, rest.then))
        rest = rest.else_
    if not _unwritten(rest):
        pieces.append((af.TRUE, rest))
    return pieces


def _unwritten(v: V.DExpr) -> bool:
    return isinstance(v, V.Const) and v.value != v.value  # NaN: never written


def _outside(region: Cond, joined: list, known: tuple) -> bool:
    """In ``region`` (and where ``known`` holds) one of the ``joined`` tests fails: a constant
    piece is the joined read's padding there."""
    pins = _pins(region)
    facts = (region.conjuncts() or []) + [c for c in known if c.op == "<"]
    for c in joined:
        p = V.renorm(c.poly.subs(pins))
        if _implied(af.Cmp(V.renorm(-p - Poly.const(1)), "<"), facts):  # p >= 0
            return True
    return False


def _restate(c: af.Cmp, k: Poly, general: Poly) -> af.Cmp | None:
    """A bounds test ``s*k + b < 0`` on a piece's index ``k`` as the same test on ``general``."""
    if c.op != "<":
        return None
    for sign in (1, -1):
        b = c.poly - sign * k
        if not (b.atoms() & (k.atoms() | general.atoms())):
            return af.Cmp(V.renorm(sign * general + b), "<")
    return None


def _agrees(
    region: Cond, g: list, ld: V.Load, joined: list, load: V.Load, known: tuple = ()
) -> bool:
    """In ``region`` (with its pinned coordinates) and where ``known`` holds, ``joined ? load``
    is ``g ? ld``."""
    pins = _pins(region)
    if V.renorm(load.index.subs(pins)) != V.renorm(ld.index):
        return False
    here = [af.Cmp(V.renorm(c.poly.subs(pins)), c.op) for c in joined]
    facts = (region.conjuncts() or []) + [
        af.Cmp(V.renorm(c.poly.subs(pins)), c.op) for c in known if c.op == "<"
    ]
    return all(c in here or _implied(c, facts + here) for c in g) and all(
        c in g or _implied(c, facts + g) for c in here
    )


def _pins(region: Cond) -> dict:
    """Coordinates a region fixes (``-threadIdx.x == 0``: ``threadIdx.x = 0``)."""
    out: dict = {}
    for c in region.conjuncts() or []:
        if c.op != "==":
            continue
        for a in c.poly.atoms():
            k = af.coefficient(c.poly, a)
            rest = c.poly - k * Poly.atom(a)
            if k.is_const and abs(k.const_value) == 1 and a not in rest.atoms():
                out[a] = -rest if k.const_value == 1 else rest
                break
    return out


def _guarded_load(v: V.DExpr) -> tuple[list, V.DExpr, object] | None:
    """``g ? x[k] : pad`` (or ``x[k]``): (the comparisons of ``g``, the load, ``pad``)."""
    if isinstance(v, V.Load):
        return [], v, None
    if (
        isinstance(v, V.Select)
        and isinstance(v.cond, V.Pred)
        and isinstance(v.then, V.Load)
        and isinstance(v.else_, V.Const)
    ):
        cmps = v.cond.cond.conjuncts()
        if cmps is not None and all(c.op == "<" for c in cmps):
            return list(cmps), v.then, v.else_.value
    return None


def _implied(c: af.Cmp, facts: list) -> bool:
    """``c`` (``p < 0``) follows from one of ``facts`` (``q < 0``) when ``q - p >= 0`` provably,
    or from two of them (``q1 + q2 < 0``: ``q1 + q2 - p >= 0``), or ``p < 0`` holds outright."""
    if c.op != "<":
        return False
    if af.provably_neg(c.poly):
        return True
    lt = [f for f in facts if f.op == "<"]
    if any(af.provably_nonneg(f.poly - c.poly) for f in lt):
        return True
    return any(
        af.provably_nonneg(f.poly + h.poly - c.poly) for i, f in enumerate(lt) for h in lt[i + 1 :]
    )
