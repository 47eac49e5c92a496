"""``halo-loads``: loads of the same rows at nearby column offsets become one load of the tile
with its halo, and each of them a shifted on-chip view of it.

A stencil's taps along the free axis (``x[r, c - 1]``, ``x[r, c]``, ``x[r, c + 1]``) are lowered
to one DMA per tap, each moving almost the same columns.  One DMA of the union window -- the
tile widened by the halo -- moves each element once; the taps read it at their column offsets.
Taps along the partition axis stay one DMA each: an engine instruction keeps every element in
its partition, so a row shift needs a DMA of its own (reference/NKI.md §3.3).

Before::  a = sbuf[P, n]; dma a <- x[r, c0:c0+n];  b = sbuf[P, n]; dma b <- x[r, c0+2:c0+2+n]
          ... a ... b ...
After::   h = sbuf[P, n+2]; dma h <- x[r, c0:c0+n+2]
          ... h[:, 0:n] ... h[:, 2:2+n] ...

A 1-D stencil on the flat ``[rows, cols]`` chunking (row ``r`` holds the chunk's elements
``r * cols`` to ``r * cols + cols - 1``) has taps that cross partitions: tap ``c`` of row ``r`` is
element ``r * cols + c``.  Its taps become one DMA of overlapping rows (IR ``Rows``: row ``r``
reads ``cols + halo`` elements from ``r * cols``, an access pattern with partition stride
``cols``), each tap a column window of it as above.

Before::  a = sbuf[P, n]; dma a <- x[s : s + P*n];  b = sbuf[P, n]; dma b <- x[s+2 : s+2 + P*n]
After::   h = sbuf[P, n+2]; dma h <- overlap_rows(x, s, P, stride n, width n+2)

Merged: loads in one block of the same input tensor (never written by the kernel), equal in
every dim but the last, whose last dims are contiguous slices of the same size starting at
constant offsets at most :data:`MAX_HALO` apart (the union holds no element the loads do not
read unless the slices are narrower than the gaps between them); each destination is the whole
of a tile written only by its load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import Alloc, Const, Kernel, Load, Rows, Slice, View
from cuda2nki.passes._load_groups import merge_grouped_loads, merge_kernel_loads
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.passes.common_tiles import _whole
from cuda2nki.passes.fold_sizes import fold_size
from cuda2nki.passes.interleaved_loads import _fresh

#: the widest halo (columns between the lowest and the highest tap) merged into one load
MAX_HALO = 64


@dataclass(frozen=True)
class HaloLoadsPass(Pass):
    name: ClassVar[str] = "halo-loads"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        return merge_kernel_loads(kernel, _block, _moved)


@dataclass(frozen=True)
class _Tap:
    """A load of one tap: its statement, its tile's allocation and its column offset from the
    lowest tap's."""

    load: Load
    alloc: Alloc
    offset: int


def _block(body: tuple, writes: dict, inputs: set[str], used: set[str], moved: dict) -> tuple:
    return merge_grouped_loads(
        body,
        key=lambda s, allocs: _key(s, allocs, writes, inputs),
        group=lambda loads, allocs: _taps(loads, allocs) if len(loads) > 1 else None,
        merge=lambda out, taps: _merge(out, taps, used, moved),
    )


def _key(s: Any, allocs: dict[str, Alloc], writes: dict, inputs: set[str]) -> Any:
    if not isinstance(s, Load) or s.src.tensor not in inputs or not s.src.dims:
        return None
    last = s.src.dims[-1]
    tile = s.dst.tensor
    if not isinstance(last, Slice) or last.step != 1 or tile not in allocs:
        return None
    if any(not isinstance(d, Slice) for d in s.src.dims):  # an At would drop a dim of the view
        return None
    alloc = allocs[tile]
    if writes.get(tile) != 1 or len(alloc.shape) != 2 or not _whole(s.dst, alloc):
        return None
    shape = (alloc.shape, alloc.dtype, alloc.buffer)
    if len(s.src.dims) == 1 and _flat_chunk(last.size, alloc):
        return (s.src.tensor, (), last.size, shape)
    if len(s.src.dims) != 2 or alloc.shape[1] != last.size:
        return None
    return (s.src.tensor, s.src.dims[:-1], last.size, shape)


def _flat_chunk(size: Any, alloc: Alloc) -> bool:
    """A 1-D slice of ``rows * cols`` elements laid out as the ``[rows, cols]`` tile (row ``r``
    holds elements ``r * cols`` to ``r * cols + cols - 1`` of the slice)."""
    rows, cols = alloc.shape
    return fold_size(size) == fold_size(rows * cols)


def _taps(loads: list[Load], allocs: dict[str, Alloc]) -> list[_Tap] | None:
    """The loads with their column offsets from the lowest one, if every offset is a constant
    and they span at most :data:`MAX_HALO` columns."""
    base = loads[0].src.dims[-1].start
    offsets = []
    for ld in loads:
        d = fold_size(ld.src.dims[-1].start - base)
        if not isinstance(d, Const):
            return None
        offsets.append(d.value)
    low = min(offsets)
    if max(offsets) - low > MAX_HALO or len(set(offsets)) < 2:
        return None
    return [_Tap(ld, allocs[ld.dst.tensor], o - low) for ld, o in zip(loads, offsets)]


def _merge(out: list, taps: list[_Tap], used: set[str], moved: dict) -> list:
    first = min(taps, key=lambda p: out.index(p.load))
    wide = _fresh(f"{first.load.src.tensor}_h", used)
    rows, n = first.alloc.shape
    halo = max(p.offset for p in taps)
    width = fold_size(n + Const(halo))
    low = next(p for p in taps if p.offset == 0).load.src.dims[-1]
    src = first.load.src.replace(dims=(*first.load.src.dims[:-1], Slice(low.start, width)))
    if len(src.dims) == 1 and rows != Const(1):  # flat chunk: row r starts n elements after r-1
        src = src.replace(dims=(Rows(low.start, rows, n, width),))
    loc = first.load.loc
    merged = [
        Alloc(wide, (rows, width), first.alloc.dtype, first.alloc.buffer, loc=first.alloc.loc),
        Load(View(wide, (Slice(Const(0), rows), Slice(Const(0), width))), src, loc=loc),
    ]
    gone = {id(p.load) for p in taps} | {id(p.alloc) for p in taps}
    at = out.index(first.alloc) if first.alloc in out else out.index(first.load)
    for p in taps:
        moved[p.load.dst.tensor] = (wide, p.offset)
    kept = [s for i, s in enumerate(out) if id(s) not in gone or i == at]
    i = next(k for k, s in enumerate(kept) if s is out[at])
    return kept[:i] + merged + kept[i + 1 :]


def _moved(x: Any, moved: dict[str, tuple[str, int]]) -> Any:
    """A view of a merged tap's tile as the shifted view of the tile with the halo."""
    if not isinstance(x, View) or x.tensor not in moved:
        return x
    wide, offset = moved[x.tensor]
    d = x.dims[1]
    col = Slice(fold_size(d.start + Const(offset)), d.size, d.step)
    return View(wide, (x.dims[0], col))
