"""Block-scan results a thread stores at ``K`` consecutive elements (a Blelloch scan: thread
``t`` stores elements ``2t`` and ``2t + 1`` of its chunk) as one store over the element.

The stores are finalised one by one: store ``r`` writes ``out[I_r(t)] = V_r(t)`` where
``G_r(t)``, with ``I_r = I_0 + r``.  With ``e = K*t + r`` (each ``e < K*B`` exactly once), every
polynomial of store ``r`` must use ``t`` as a multiple of ``K*t`` so that it rewrites exactly to a
polynomial of ``e``; when the ``K`` rewritten stores agree, they are one store over ``e`` -- a
block of ``K*B`` lanes -- whose prefix folds (``j < e``, ``j < e + 1``) are scans along ``e``.
Only stores whose values hold folds bounded by the thread coordinate are merged here (the
intent-level interleaving merges other register-blocked statements).
"""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.network import _NotNetwork, rebase, rebase_poly

_T = "threadIdx.x"
_MAX_LANES = 8


def merge(recs: list, block: tuple) -> list[tuple[tuple, int]]:
    """``recs`` (``(store, index, value, guard, loops, extra)`` per finalised store) with runs of
    block-scan lanes merged: ``(record, lanes)`` pairs, ``lanes`` the number merged."""
    out: list = []
    k = 0
    while k < len(recs):
        for count in range(min(_MAX_LANES, len(recs) - k), 1, -1):
            got = _merge(recs[k : k + count], block)
            if got is not None:
                out.append((got, count))
                k += count
                break
        else:
            out.append((recs[k], 1))
            k += 1
    return out


def _merge(group: list, block: tuple) -> tuple | None:
    if not block or tuple(block[1:]) != (1, 1):
        return None
    first = group[0]
    if any(not _candidate(rec, first[0].tensor) for rec in group):
        return None
    bdim = {"blockDim.x": Poly.const(block[0])}
    base = af.expand_gid(first[1]).subs(bdim)
    step = af.coefficient(base, _T)
    if not step.is_const or step.const_value <= 0:
        return None
    offsets = []
    for rec in group:
        off = af.expand_gid(rec[1]).subs(bdim) - base
        if not off.is_const:
            return None
        offsets.append(off.const_value)
    # element e = step*t + offset: every e < lanes*B exactly once
    spots = sorted(step.const_value * t + o for o in offsets for t in range(block[0]))
    if spots != list(range(len(group) * block[0])):
        return None
    keys = []
    for rec, off in zip(group, offsets):
        got = _rebased(step.const_value, off, rec, bdim)
        if got is None:
            return None
        keys.append(got)
    if any(k != keys[0] for k in keys[1:]):
        return None
    index, value, guard = keys[0]
    return (first[0], index, value, guard, first[4], first[5])


def _candidate(rec: tuple, tensor: str) -> bool:
    st, _, value, _, loops, extra = rec
    if st.tensor != tensor or loops or extra or st.accumulate is not None:
        return False
    if any(isinstance(n, V.Load) and n.tensor == tensor for n in V.walk(value)):
        return False
    return any(isinstance(n, V.Fold) and _T in n.stop.atoms() for n in V.walk(value))


def _rebased(a: int, c: int, rec: tuple, bdim: dict) -> tuple | None:
    """The store ``rec`` of the thread handling element ``e = a*t + c``, over ``e``."""
    from cuda2nki.lift.finalize import _map_cond, _map_polys

    _, index, value, guard, _, _ = rec

    def expand(p: Poly) -> Poly:
        return af.expand_gid(p).subs(bdim)

    value = rebase(_map_polys(value, expand), a, c, _T)
    if value is None:
        return None
    try:
        index = rebase_poly(expand(index), a, c, _T)
        guard = V.simplify_cond(
            _map_cond(_map_cond(guard, expand), lambda p: rebase_poly(p, a, c, _T))
        )
    except _NotNetwork:
        return None
    return index, value, guard
