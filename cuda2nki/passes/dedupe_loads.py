"""``dedupe-loads``: a tile already loaded in the same block is reused, not loaded again.

Lowering compiles each read of a statement on its own, so an expression that reads the same
HBM window in several places (the row of a softmax: for its maximum, its exponentials and their
sum) loads it several times.  One DMA is enough while nothing writes that HBM tensor in between.

Before::  a = sbuf[...]; dma a <- x[r:r+n, 0:C]; b = sbuf[...]; dma b <- x[r:r+n, 0:C]; ... b ...
After::   a = sbuf[...]; dma a <- x[r:r+n, 0:C]; ... a ...

A load is merged into an earlier one of the same block when both tiles have the same shape,
dtype and buffer, each is written only by its load, the HBM views are equal and no statement in
between stores to that HBM tensor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import Alloc, Const, Kernel, Load, Loop, Slice, Store, View
from cuda2nki.passes._analysis import transform
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.passes.hoist_loads import _written


@dataclass(frozen=True)
class DedupeLoadsPass(Pass):
    name: ClassVar[str] = "dedupe-loads"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        return kernel.replace(body=_block(kernel.body))


def _block(stmts: tuple) -> tuple:
    stmts = tuple(s.replace(body=_block(s.body)) if isinstance(s, Loop) else s for s in stmts)
    allocs = {s.name: s for s in stmts if isinstance(s, Alloc)}
    writes: dict[str, int] = {}
    for s in stmts:
        for name in _written(s):
            writes[name] = writes.get(name, 0) + 1
    seen: dict[tuple, str] = {}  # (HBM view, tile alloc signature) -> first tile
    rename: dict[str, str] = {}
    drop: set[str] = set()
    out: list = []
    for s in stmts:
        if isinstance(s, Store | Loop):  # a store (or one inside a loop) invalidates its tensor
            stored = _stored(s)
            seen = {k: v for k, v in seen.items() if k[0].tensor not in stored}
        s = _renamed(s, rename) if rename else s
        if isinstance(s, Load) and _mergeable(s, allocs, writes):
            key = (s.src, _signature(allocs[s.dst.tensor]))
            first = seen.get(key)
            if first is not None:
                rename[s.dst.tensor] = first
                drop.add(s.dst.tensor)
                continue
            seen[key] = s.dst.tensor
        out.append(s)
    return tuple(s for s in out if not (isinstance(s, Alloc) and s.name in drop))


def _mergeable(s: Load, allocs: dict[str, Alloc], writes: dict[str, int]) -> bool:
    tile = s.dst.tensor
    return tile in allocs and writes.get(tile) == 1 and _whole(s.dst, allocs[tile])


def _whole(v: View, a: Alloc) -> bool:
    """The view covers the whole tile (``dims == ()`` or ``ds(0, n)`` on every dim)."""
    if v.dims == ():
        return True
    return len(v.dims) == len(a.shape) and all(
        isinstance(d, Slice) and d.start == Const(0) and d.size == n and d.step == 1
        for d, n in zip(v.dims, a.shape)
    )


def _signature(a: Alloc) -> tuple:
    return (a.shape, a.dtype, a.buffer)


def _stored(s: Any) -> set[str]:
    if isinstance(s, Store):
        return {s.dst.tensor}
    if isinstance(s, Loop):
        return {t for x in s.body for t in _stored(x)}
    return set()


def _renamed(node: Any, rename: dict[str, str]) -> Any:
    """``node`` with every view of a renamed tile pointing at the tile it was merged into."""

    def move(x: Any) -> Any:
        if isinstance(x, View) and x.tensor in rename:
            return x.replace(tensor=rename[x.tensor])
        return x

    return transform(node, move, skip=(Alloc,))
