"""Data values that stand where a counted index stands: ``y[row * P + label[row]]`` beside
``y[row * P + i]`` under ``i < V``.

The element a loaded value picks is one the kernel's counted accesses also reach: the offset of
the data access is that of a counted access with the value in place of the counter.  The values
then take the counter's range ``[0, V)`` (a size) rather than the fixed ``[0, DATA_VALUES)`` of
:mod:`cuda2nki.lift.dataindex`, which would not compare with ``V`` and leave the array unsized.
Only a counter whose bound holds sizes only (no other index) lends its range.
"""

from __future__ import annotations

from cuda2nki.lift.affine import Poly
from cuda2nki.lift.dataindex import data_name


def peer_bounds(acc: list, scan) -> dict[str, Poly]:
    """Data atom -> the bound of the counter it replaces in ``acc`` (accesses of one pointer),
    for every data atom that replaces one counter, and always the same bound."""
    out: dict[str, Poly | None] = {}
    counted = [a for a in acc if a.offset is not None and not _data_terms(scan._expand(a.offset))]
    for a in acc:
        if a.offset is None:
            continue
        full = scan._expand(a.offset)
        data = _data_terms(full)
        if len(data) != 1:
            continue
        atom, term = data[0]
        got = _peer(full - term, counted, scan)
        if out.get(atom, got) != got:
            got = None  # two counters of different ranges: neither is taken
        out[atom] = got
    return {k: v for k, v in out.items() if v is not None}


def _data_terms(p: Poly) -> list[tuple[str, Poly]]:
    """The terms of ``p`` holding a data atom, as (atom, term); a term of coefficient 1 over that
    atom alone gives it, any other such term gives a sentinel that matches no counter."""
    out = []
    for m, c in p.terms:
        names = [a for a in m if data_name(a) is not None]
        if names:
            ok = c == 1 and len(m) == 1
            out.append((names[0] if ok else "", Poly(((m, c),))))
    return out


def _peer(rest: Poly, counted: list, scan) -> Poly | None:
    """The bound of the counter ``i`` of a counted access whose offset is ``rest + i``."""
    for b in counted:
        full = scan._expand(b.offset)
        for m, c in full.terms:
            if c != 1 or len(m) != 1:
                continue
            if full - Poly(((m, c),)) != rest:
                continue
            bound = dict(b.bounds).get(m[0])
            if bound is None:
                continue
            hi = bound[0] if isinstance(bound, tuple) else bound
            if isinstance(hi, Poly) and not hi.depends_on(scan._index_atoms(hi)):
                return hi
    return None
