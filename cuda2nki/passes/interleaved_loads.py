"""``interleaved-loads``: strided loads that together cover a contiguous range become one load.

A kernel that reads every ``s``-th element at each of the offsets ``0 .. s-1`` (a 2x2 pool's
even and odd columns, a rotary embedding's pairs) is lowered to ``s`` strided DMAs, each moving
``1/s`` of the contiguous bytes.  One DMA of the whole range, with strided on-chip views for
the ``s`` tiles, moves the same data in fewer, larger transfers.

Before::  a = sbuf[P, n]; dma a <- x[r, 0:2n:2];  b = sbuf[P, n]; dma b <- x[r, 1:2n:2]
          ... a ... b ...
After::   w = sbuf[P, 2n]; dma w <- x[r, 0:2n]
          ... w[:, 0:2n:2] ... w[:, 1:2n:2] ...

Merged: loads in one block of the same input tensor (never written by the kernel), equal in
every dim but the last, whose last dims have the same size and step ``s`` and start at
constant offsets covering ``0 .. s-1`` exactly once (so no element outside the original reads
is fetched); each destination is the whole of a tile written only by its load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import Alloc, Const, Kernel, Load, Slice, View
from cuda2nki.passes._load_groups import merge_grouped_loads, merge_kernel_loads
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.passes.common_tiles import _whole
from cuda2nki.passes.fold_sizes import fold_size


@dataclass(frozen=True)
class InterleavedLoadsPass(Pass):
    name: ClassVar[str] = "interleaved-loads"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        return merge_kernel_loads(kernel, _block, _moved)


@dataclass(frozen=True)
class _Part:
    """A strided load: its statement, its tile's allocation and its start offset."""

    load: Load
    alloc: Alloc
    offset: int


def _block(body: tuple, writes: dict, inputs: set[str], used: set[str], moved: dict) -> tuple:
    return merge_grouped_loads(
        body,
        key=lambda s, allocs: _key(s, allocs, writes, inputs),
        group=lambda loads, allocs: _parts(loads, allocs),
        merge=lambda out, parts: _merge(out, parts, used, moved),
    )


def _key(s: Any, allocs: dict[str, Alloc], writes: dict, inputs: set[str]) -> Any:
    if not isinstance(s, Load) or s.src.tensor not in inputs or not s.src.dims:
        return None
    last = s.src.dims[-1]
    tile = s.dst.tensor
    if not isinstance(last, Slice) or last.step < 2 or tile not in allocs:
        return None
    alloc = allocs[tile]
    if writes.get(tile) != 1 or len(alloc.shape) != 2 or not _whole(s.dst, alloc):
        return None
    if alloc.shape[1] != last.size:
        return None
    shape = (alloc.shape, alloc.dtype, alloc.buffer)
    return (s.src.tensor, s.src.dims[:-1], last.size, last.step, shape)


def _parts(loads: list[Load], allocs: dict[str, Alloc]) -> list[_Part] | None:
    """The loads with their offsets from the lowest start, if they cover every residue once."""
    step = loads[0].src.dims[-1].step
    if len(loads) != step:
        return None
    base = loads[0].src.dims[-1].start
    offsets = []
    for ld in loads:
        d = fold_size(ld.src.dims[-1].start - base)
        if not isinstance(d, Const):
            return None
        offsets.append(d.value)
    low = min(offsets)
    if sorted(o - low for o in offsets) != list(range(step)):
        return None
    return [_Part(ld, allocs[ld.dst.tensor], o - low) for ld, o in zip(loads, offsets)]


def _merge(out: list, parts: list[_Part], used: set[str], moved: dict) -> list:
    first = min(parts, key=lambda p: out.index(p.load))
    step = len(parts)
    wide = _fresh(f"{first.load.dst.tensor}_w", used)
    rows, n = first.alloc.shape
    width = fold_size(Const(step) * n)
    low = next(p for p in parts if p.offset == 0).load.src.dims[-1]
    src = first.load.src.replace(dims=(*first.load.src.dims[:-1], Slice(low.start, width)))
    loc = first.load.loc
    merged = [
        Alloc(wide, (rows, width), first.alloc.dtype, first.alloc.buffer, loc=first.alloc.loc),
        Load(View(wide, (Slice(Const(0), rows), Slice(Const(0), width))), src, loc=loc),
    ]
    gone = {id(p.load) for p in parts} | {id(p.alloc) for p in parts}
    at = out.index(first.alloc) if first.alloc in out else out.index(first.load)
    for p in parts:
        moved[p.load.dst.tensor] = (wide, p.offset, step)
    kept = [s for i, s in enumerate(out) if id(s) not in gone or i == at]
    i = next(k for k, s in enumerate(kept) if s is out[at])
    return kept[:i] + merged + kept[i + 1 :]


def _fresh(base: str, used: set[str]) -> str:
    name, k = base, 1
    while name in used:
        name, k = f"{base}{k}", k + 1
    used.add(name)
    return name


def _moved(x: Any, moved: dict[str, tuple[str, int, int]]) -> Any:
    """A view of a merged tile as the strided view of the wide tile."""
    if not isinstance(x, View) or x.tensor not in moved:
        return x
    wide, offset, step = moved[x.tensor]
    if len(x.dims) != 2 or not isinstance(x.dims[1], Slice):
        return x
    d = x.dims[1]
    col = Slice(fold_size(Const(offset) + d.start * Const(step)), d.size, d.step * step)
    return View(wide, (x.dims[0], col))
