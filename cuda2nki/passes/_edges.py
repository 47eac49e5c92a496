"""The edge pieces of an index-bounded select: where ``select(lo <= i < hi, A, B)`` takes ``B``.

``guards-to-domains`` writes ``A`` on the narrowed domain ``lo <= i < hi``.  ``B`` (a boundary
value, a pinned edge row) runs where the kernel runs it: on ``i < lo`` and on ``i >= hi``, two
pieces of the same statement, rather than everywhere before ``A`` overwrites the interior (which
moves the whole tensor twice and reloads what ``B`` reads once per row tile).

Only one bounded axis, and not the axis of the target's contiguous last dimension: edge rows are
whole rows of the tensor (full-width DMAs); edge columns would be one element per partition row,
and the edge of a 1-D tensor one element, for which the whole-domain write is the better
lowering -- unless ``B`` reads a neighbour the guard kept inside its tensor (``i < 1 ? v :
x[i - 1]``): written everywhere, it would read outside the tensor on the interior.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cuda2nki.ir.nodes import Compute, Const, Max, Min, Read, SizeExpr, Sym
from cuda2nki.passes._analysis import walk


def edge_ranges(
    c: Compute, bounds: Mapping[str, Any], new_range: Callable[..., Any], *, whole_ok: bool = True
) -> list[dict[str, Any]] | None:
    """The bounds of the pieces of ``c``'s domain outside ``bounds`` (each a dict for
    ``_restrict``), or None where the select is better written whole (see the module doc).
    ``whole_ok=False``: ``B`` may not run on the interior (it reads a neighbour there that
    may lie outside its tensor, ``i < 1 ? v : x[i - 1]``), so the pieces are wanted on any
    axis."""
    if len(bounds) != 1:
        return None
    ((axis, rng),) = bounds.items()
    if rng.mod is not None or not (rng.lo or rng.hi):
        return None
    index = c.target.index
    if whole_ok and (len(index) < 2 or (isinstance(index[-1], Sym) and index[-1].name == axis)):
        return None
    extent = next(a.extent for a in c.domain.axes if a.name == axis)
    pieces: list[dict[str, Any]] = []
    lo: SizeExpr | None = None
    for b in rng.lo:
        lo = b if lo is None else Max(lo, b)
    if lo is not None:  # i < lo (below the interior)
        pieces.append({axis: new_range(hi=[lo])})
    if rng.hi:  # i >= max(lo, hi): above it, and never the rows below it again
        hi: SizeExpr = extent
        for b in rng.hi:
            hi = Min(hi, b)
        start = Max(hi, Const(0)) if lo is None else Max(lo, hi)  # never a row below 0
        pieces.append({axis: new_range(lo=[start])})
    return pieces


def shifted_reads(e: Any, c: Compute) -> bool:
    """``e`` reads an element at an index of ``c``'s axes other than the target's (a
    neighbour, ``x[i - 1]``; not ``x[i]`` nor ``w[1]``)."""
    axes = set(c.domain.names)

    def moves(ix: Any) -> bool:
        return hasattr(ix, "free_syms") and bool(ix.free_syms() & axes)

    return any(
        isinstance(x, Read) and x.index != c.target.index and any(moves(ix) for ix in x.index)
        for x in walk(e)
    )
