"""``dedupe-loads``: a tile already loaded in the same block is reused, not loaded again.

Lowering compiles each read of a statement on its own, so an expression that reads the same
HBM window in several places (the row of a softmax: for its maximum, its exponentials and their
sum) loads it several times.  One DMA is enough while nothing writes that HBM tensor in between.

Before::  a = sbuf[...]; dma a <- x[r:r+n, 0:C]; b = sbuf[...]; dma b <- x[r:r+n, 0:C]; ... b ...
After::   a = sbuf[...]; dma a <- x[r:r+n, 0:C]; ... a ...

A load is merged into an earlier one of the same block, or of an enclosing block (a load before
a loop serves the loop body), when both tiles have the same shape, dtype and buffer, each is
written only by its load, the HBM views are equal and no statement in between (nor the loop
around the later load) stores to that HBM tensor -- a store to an ``inout`` tensor does not count:
its loads read the kernel-entry value (the port stores to a separate output).  A partition broadcast (every partition gets
the same elements: a scalar coefficient, a bias row) loaded onto 128 partitions also serves a
later load of it onto fewer partitions -- the ragged last tile of a loop -- as its first rows.

Before::  c = sbuf[128, 1]; dma c <- w[3]; for ...: r = sbuf[rows, 1]; dma r <- w[3]; ... r ...
After::   c = sbuf[128, 1]; dma c <- w[3]; for ...: ... c[0:rows, 0:1] ...

A tile filled by a run of statements (zeroed, then loaded by guarded DMAs of a ragged block)
is merged the same way into an earlier tile filled by the same run (:mod:`._load_runs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import Alloc, At, Const, Kernel, Load, Loop, Slice, Store, View
from cuda2nki.ir.ops import Role
from cuda2nki.passes._analysis import transform
from cuda2nki.passes._load_runs import fill_run, run_key, run_sources
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.passes.hoist_loads import _written


@dataclass(frozen=True)
class DedupeLoadsPass(Pass):
    name: ClassVar[str] = "dedupe-loads"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        inout = frozenset(t.name for t in kernel.outputs if t.role == Role.INOUT)
        return kernel.replace(body=_block(kernel.body, None, inout))


Seen = dict[tuple, tuple[str, Alloc]]  # (HBM view, dtype, buffer, free dims) -> (tile, alloc)


def _block(stmts: tuple, inherited: Seen | None, inout: frozenset[str]) -> tuple:
    allocs = {s.name: s for s in stmts if isinstance(s, Alloc)}
    writes: dict[str, int] = {}
    for s in stmts:
        for name in _written(s):
            writes[name] = writes.get(name, 0) + 1
    seen: Seen = dict(inherited or {})
    rename: dict[str, View] = {}  # merged tile -> the view of the tile that serves it
    drop: set[str] = set()
    out: list = []
    skip = 0
    for at, s in enumerate(stmts):
        if skip:  # the rest of a run of statements that filled a tile already filled
            skip -= 1
            continue
        if isinstance(s, Store | Loop):  # a store (or one inside a loop) invalidates its tensor
            stored = _stored(s) - inout  # a load of an inout reads its kernel-entry value
            seen = {k: v for k, v in seen.items() if not _sources(k) & stored}
        skip = _merge_run(stmts, at, allocs, writes, seen, rename, drop)
        if skip:
            skip -= 1
            continue
        s = _renamed(s, rename) if rename else s
        if isinstance(s, Loop):
            s = s.replace(body=_block(s.body, seen, inout))
        if isinstance(s, Load) and _mergeable(s, allocs, writes):
            alloc = allocs[s.dst.tensor]
            key = (s.src, alloc.dtype, alloc.buffer, alloc.shape[1:])
            first = seen.get(key)
            if first is not None and _serves(first[1], alloc, s.src):
                rename[s.dst.tensor] = _rows_of(first[0], alloc)
                drop.add(s.dst.tensor)
                continue
            seen[key] = (s.dst.tensor, alloc)
        out.append(s)
    return tuple(s for s in out if not (isinstance(s, Alloc) and s.name in drop))


def _merge_run(
    stmts: tuple,
    at: int,
    allocs: dict[str, Alloc],
    writes: dict[str, int],
    seen: Seen,
    rename: dict[str, View],
    drop: set[str],
) -> int:
    """How many statements from ``at`` a run filling a tile the same way as an earlier run
    stands for (they are dropped and the tile renamed); 0 where nothing merges (a first run
    is remembered)."""
    n = fill_run(stmts, at, allocs, writes)
    if not n:
        return 0
    run = stmts[at : at + n]
    alloc = allocs[_tile_of(run)]
    key = (run_sources(run), *run_key(run, alloc))
    first = seen.get(key)
    if first is None:
        seen[key] = (alloc.name, alloc)
        return 0
    rename[alloc.name] = _rows_of(first[0], alloc)
    drop.add(alloc.name)
    return n


def _tile_of(run: tuple) -> str:
    return next(t for s in run for t in _written(s))


def _sources(key: tuple) -> frozenset[str]:
    """The HBM tensors a remembered load (or run of loads) read."""
    return key[0] if isinstance(key[0], frozenset) else frozenset((key[0].tensor,))


def _serves(first: Alloc, later: Alloc, src: View) -> bool:
    """The earlier tile holds what the later one would: the same shape, or a partition
    broadcast of ``src`` on all 128 partitions (the later tile has at most 128)."""
    if first.shape == later.shape:
        return True
    return first.shape[0] == Const(128) and _broadcast(src, later.shape[1:])


def _broadcast(src: View, free: tuple) -> bool:
    """``src`` holds exactly one partition's worth of elements (every partition gets them all)."""
    if not src.dims:
        return False
    got = [d.size for d in src.dims if isinstance(d, Slice) and d.size != Const(1)]
    if any(not isinstance(d, Slice | At) for d in src.dims):
        return False
    want = [d for d in free if d != Const(1)]
    return got == want


def _rows_of(tile: str, later: Alloc) -> View:
    """The view of ``tile`` standing for the whole of ``later`` (its first rows)."""
    return View(tile, tuple(Slice(Const(0), n) for n in later.shape))


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


def _renamed(node: Any, rename: dict[str, View]) -> Any:
    """``node`` with every view of a merged tile pointing into the tile that serves it (a view
    of the whole merged tile becomes that tile's rows)."""

    def move(x: Any) -> Any:
        if isinstance(x, View) and x.tensor in rename:
            by = rename[x.tensor]
            return by if not x.dims else x.replace(tensor=by.tensor)
        return x

    return transform(node, move, skip=(Alloc,))
