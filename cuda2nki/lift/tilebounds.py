"""Upper bounds of tiled offsets, for pointer extents read from syntax (:mod:`.extents`).

Two forms that a plain term-by-term bound overestimates:

* a bounded sum scaled by a size: ``if (k0 + threadIdx.y < K) ... B[(k0 + threadIdx.y) * N + j]``
  -- the guard bounds ``k0 + threadIdx.y``, and the offset holds ``N`` times that sum;
* a tile loop and the offset inside its tile: ``for (k = 0; k < K; k += BK) ... A[k + c]`` with
  ``c < BK`` (also through a pointer bumped by ``BK`` per trip).  Unguarded, the largest offset is
  ``K - 1`` when ``K`` is a multiple of ``BK``, which such a kernel assumes of its host (a tiled
  GEMM without bounds checks); the extent says so in its note.

Also :func:`loose_strides`: the strides left when those that are a constant multiple of another
are dropped (``32 * N * blockIdx.x`` beside ``N * row``: a tile step inside the row dim, not a
dim of its own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly

#: an atom's inclusive upper bound (or None when unknown)
Upper = Callable[[Poly], Poly | None]


def _term(m: tuple, c: int) -> Poly:
    return Poly(((m, c),))


def scaled_key(p: Poly, key: Poly, is_size: Callable[[object], bool]) -> Poly | None:
    """The factor ``f`` (a positive constant times sizes) with every term of ``f * key`` a term
    of ``p``, or None."""
    if not key.terms:
        return None
    mine = dict(p.terms)
    m0, c0 = next((m, c) for m, c in key.terms if m)
    for m, c in p.terms:
        f = af._exact_div(_term(m, c), _term(m0, c0))
        if f is None or not f.terms or f.terms[0][1] <= 0:
            continue
        if not all(is_size(a) for a in f.top_atoms()) or f == af.ONE:
            continue
        scaled = f * key
        if all(mine.get(sm) == sc for sm, sc in scaled.terms):
            return f
    return None


@dataclass(frozen=True)
class TilePair:
    """``part`` of an offset (``coef * (loop + inside)``), its inclusive upper bound ``top`` and
    the loop whose bound it assumes a multiple of ``step``."""

    part: Poly
    top: Poly
    loop: str
    step: int
    bound: Poly


def tile_pair(
    p: Poly,
    steps: dict,
    hi: dict,
    upper: Upper,
    is_size: Callable[[object], bool],
) -> TilePair | None:
    """The first tile loop of ``steps`` (loop atom -> constant step) whose counter appears in
    ``p`` beside terms of the same coefficient that stay inside one tile (their upper bounds sum
    to less than the step)."""
    for atom, step in steps.items():
        if not step or step <= 1 or atom not in hi or atom not in p.top_atoms():
            continue
        bound = hi[atom][0]
        coef = af.coefficient(p, atom)
        if len(coef.terms) != 1 or coef.terms[0][1] <= 0:
            continue
        if not all(is_size(a) for a in coef.top_atoms()):
            continue
        if not all(is_size(a) for a in bound.top_atoms()) or bound.is_const:
            continue
        part, budget, inside = coef * Poly.atom(atom), step - 1, False
        for m, c in p.terms:
            if atom in m or c <= 0:
                continue
            q = af._exact_div(_term(m, c), coef)
            if q is None or not q.top_atoms() or any(is_size(a) for a in q.top_atoms()):
                continue
            top = upper(q)
            if top is None or not top.is_const or top.const_value > budget:
                continue
            budget -= top.const_value
            part = part + _term(m, c)
            inside = True
        if inside:
            return TilePair(part, coef * (bound - 1), str(atom).lstrip("%"), step, bound)
    return None


def loose_strides(strides: list[Poly]) -> list[Poly]:
    """``strides`` without those that are a constant multiple (> 1) of another one."""
    out = []
    for s in strides:
        if s.is_const and s != af.ONE:
            out.append(s)
            continue
        if any(
            t != s and (q := af._exact_div(s, t)) is not None and q.is_const and q.const_value > 1
            for t in strides
        ):
            continue
        out.append(s)
    return out
