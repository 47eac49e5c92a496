"""Store-to-load forwarding for the symbolic executor (not a pass): which earlier store of a
thread wrote the element a load reads, and under which condition.

A store made in a loop is matched to a load in a later loop over the same trip count by renaming
the loop variables, or to a load in a later loop over a wider range (``k <= q`` then ``k < T``)
under the earlier loop's condition, renamed."""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.diagnostics import UNKNOWN_LOC, SourceLoc
from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly


@dataclass(frozen=True)
class LoopCtx:
    """A loop normalised to ``var`` in ``[0, extent)``; ``guard`` holds inside the body (the
    original ``v < stop`` when the start depends on the thread: block/grid-stride loops)."""

    var: str
    extent: Poly
    guard: Cond
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class StoreRec:
    tensor: str
    index: Poly
    value: V.DExpr
    guard: Cond
    loops: tuple  # tuple[LoopCtx, ...] enclosing parallel loops
    accumulate: str | None
    loc: SourceLoc
    seq: int


def forward_store(st: StoreRec, index: Poly, loops: list[LoopCtx]) -> tuple | V.DExpr | None:
    """(value, guard) of an earlier store of this thread to the element at ``index``: the value
    it stored where ``guard`` held (in the reader's loop variables); None if it cannot be
    decided, ``MISS`` when the store provably wrote another element."""
    if st.accumulate is not None:
        return None
    if st.index == index and all(lc in loops for lc in st.loops):
        return st.value, st.guard
    # the store ran in an earlier loop with the same trip count: rename its variables; or in
    # an earlier loop over fewer trips (``k <= q`` then ``k < T``): its value holds where the
    # reader's variable is within the store loop's trips (its guard and extent, renamed)
    cur = [lc for lc in loops if lc not in st.loops]
    old = [lc for lc in st.loops if lc not in loops]
    mapping: dict = {}
    within: list[Cond] = []
    for o in old:
        free = [c for c in cur if af.sym(c.var) not in mapping.values()]
        match = [
            c
            for c in free
            if (c.extent, c.guard.subs({c.var: af.sym(o.var)})) == (o.extent, o.guard)
        ]
        if not match:  # the reader's loop runs where the store's did and further
            match = [c for c in free if c.guard.kind == "true"]
            if match:
                var = af.sym(match[0].var)
                if match[0].extent != o.extent:
                    within.append(Cond.of(af.Cmp((var - o.extent).subs(mapping), "<")))
                within.append(o.guard.subs({o.var: var}).subs(mapping))
        if not match:
            break
        mapping[o.var] = af.sym(match[0].var)
    if old and len(mapping) == len(old) and st.index.subs(mapping) == index:
        return V.subs_poly(st.value, mapping), af.conj([st.guard.subs(mapping), *within])
    diff = st.index - index
    if diff.is_const and diff.const_value != 0 and all(lc in loops for lc in st.loops):
        return MISS
    return None


MISS = V.Const("bool", False)  # sentinel: the store cannot have written the element


def _conjuncts(c: Cond) -> set[Cond]:
    if c.kind == "true":
        return set()
    return set(c.args) if c.kind == "and" else {c}


def implies(now: Cond, wrote: Cond) -> bool:
    """Every condition the store ran under holds where the load runs (syntactically, or over
    the known ranges of the atoms)."""
    missing = _conjuncts(wrote) - _conjuncts(now)
    return all(V.simplify_cond(c).kind == "true" for c in missing)


def disjoint(now: Cond, wrote: Cond) -> bool:
    """No thread satisfies both conditions: one holds a comparison the other negates, or an
    equality of one (``i == 0``, ``i == n - 1``) decides a comparison of the other false."""
    a, b = _conjuncts(now), _conjuncts(wrote)
    if any(c.kind == "cmp" and c.negate() in b for c in a):
        return True
    return _pinned_false(a, b) or _pinned_false(b, a)


def _pinned_false(eqs: set[Cond], others: set[Cond]) -> bool:
    """An equality ``x + r == 0`` of ``eqs`` (``x`` an atom of unit coefficient) substituted
    into a comparison of ``others`` makes it false."""
    for e in eqs:
        if e.kind != "cmp" or e.cmp.op != "==":
            continue
        p = e.cmp.poly
        for a in p.top_atoms():
            coeff = af.coefficient(p, a)
            if not coeff.is_const or coeff.const_value not in (1, -1):
                continue
            rest = p - af.Poly.atom(a) * coeff
            if a in rest.atoms():
                continue
            value = -rest if coeff.const_value == 1 else rest
            for o in others:
                if o.kind == "cmp" and a in o.cmp.poly.atoms():
                    if V.simplify_cond(o.subs({a: value})).kind == "false":
                        return True
    return False
