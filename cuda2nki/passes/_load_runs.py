"""Tiles filled by a run of statements (``dedupe-loads``): a memset and guarded DMAs.

A ragged tile is often filled in pieces: zeroed, then its whole rows loaded by one DMA and the
partial last row by another, each under a guard loop of 0 or 1 trips.  Every read of the same
HBM window compiles to the same run into a fresh tile; the second and later runs are the same
statements with another tile (and other guard loop names), so the tile the first run filled
serves them::

    a = sbuf[n, 32]; memset a; for g < k: dma a[0:m] <- x[...]; for g1 < k1: dma a[m] <- x[...]
    b = sbuf[n, 32]; memset b; for g2 < k: dma b[0:m] <- x[...]; for g3 < k1: dma b[m] <- x[...]
    ->  the second run and ``b`` are dropped, reads of ``b`` read ``a``

A run is the statements right after each other that write the tile and nothing else: memsets,
loads and loops whose bodies are such statements; it holds every write of the tile in its block
and at least one load.  Two runs are the same when their statements are equal once the tile
and the loop variables are renamed in order of appearance.
"""

from __future__ import annotations

from typing import Any

from cuda2nki.ir.nodes import Alloc, Load, Loop, Memset, Sym, View
from cuda2nki.rewrite import strip_locs, transform

TILE = "%tile"


def fill_run(stmts: tuple, at: int, allocs: dict[str, Alloc], writes: dict[str, int]) -> int:
    """The length of the run filling one tile that starts at ``stmts[at]`` (0: none there, or
    a run of a single plain load, which the caller merges on its own)."""
    tile = _only_tile(stmts[at])
    if tile is None or tile not in allocs:
        return 0
    end, count = at, 0
    while end < len(stmts) and _only_tile(stmts[end]) == tile:
        count += _writes(stmts[end])
        end += 1
    run = stmts[at:end]
    if count != writes.get(tile) or not any(_loads(s) for s in run):
        return 0
    if len(run) == 1 and isinstance(run[0], Load):
        return 0
    return end - at


def run_key(run: tuple, alloc: Alloc) -> tuple:
    """What the run computes, free of the tile's and its loops' names, with the tile's type."""
    tile = _only_tile(run[0])
    names: dict[str, str] = {}
    for s in run:
        for loop in _loops(s):
            names.setdefault(loop.var, f"%v{len(names)}")

    def canon(x: Any) -> Any:
        if isinstance(x, View) and x.tensor == tile:
            return x.replace(tensor=TILE)
        if isinstance(x, Sym) and x.name in names:
            return Sym(names[x.name])
        if isinstance(x, Loop) and x.var in names:
            return x.replace(var=names[x.var])
        return x

    body = tuple(strip_locs(transform(s, canon, skip=(Alloc,))) for s in run)
    return ("run", body, alloc.shape, alloc.dtype, alloc.buffer)


def run_sources(run: tuple) -> frozenset[str]:
    """The HBM tensors the run's loads read."""
    return frozenset(x.src.tensor for s in run for x in _loads(s))


def _only_tile(s: Any) -> str | None:
    """The one tile ``s`` writes when it is a memset, a load, or a loop of those (else None)."""
    if isinstance(s, Memset | Load):
        return s.dst.tensor
    if isinstance(s, Loop) and s.body:
        tiles = {_only_tile(x) for x in s.body}
        if len(tiles) == 1 and None not in tiles:
            return tiles.pop()
    return None


def _writes(s: Any) -> int:
    return sum(_writes(x) for x in s.body) if isinstance(s, Loop) else 1


def _loads(s: Any) -> list[Load]:
    if isinstance(s, Loop):
        return [x for b in s.body for x in _loads(b)]
    return [s] if isinstance(s, Load) else []


def _loops(s: Any) -> list[Loop]:
    if isinstance(s, Loop):
        return [s, *(x for b in s.body for x in _loops(b))]
    return []
