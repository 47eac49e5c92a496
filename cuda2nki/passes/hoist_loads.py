"""``hoist-loads``: move loop-invariant tile loads out of loops so they are loaded once and reused.

Before::  for t in range(T):  g_t = sbuf[...] ; dma g_t <- g[0:C] ; ... uses g_t ...
After::   g_t = sbuf[...] ; dma g_t <- g[0:C] ; for t in range(T): ... uses g_t ...

A Load (with its Alloc) is hoisted when neither its tile shape nor its HBM view mentions the loop
variable, its tile is written by nothing else in the loop, no tile it reads (a gather's offsets)
is written in the loop, and the loop has at least one iteration
whenever the load would matter (hoisting runs the DMA once even for an empty loop, which is
harmless: tiles are private scratch).

A load whose HBM view is the same in every trip but whose tile is sized by the trip (a value
broadcast over ragged row tiles, ``min(128, R - 128 * t)`` partitions) is hoisted too, from a
loop that starts at 0, when its extents only shrink as the loop goes on: it is loaded once at
the first trip's extents, and each trip reads its first rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import (
    Add,
    Alloc,
    CeilDiv,
    Const,
    FloorDiv,
    Kernel,
    Load,
    Loop,
    Max,
    Min,
    Mul,
    SizeExpr,
    Sub,
    Sym,
    View,
)
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.rewrite import transform


@dataclass(frozen=True)
class HoistLoadsPass(Pass):
    name: ClassVar[str] = "hoist-loads"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        return kernel.replace(body=_hoist_block(kernel.body))


def _hoist_block(stmts: tuple) -> tuple:
    out: list = []
    for s in stmts:
        if isinstance(s, Loop):
            inner = s.replace(body=_hoist_block(s.body))
            hoisted, kept = _split(inner)
            out.extend(hoisted)
            out.append(inner.replace(body=kept))
        else:
            out.append(s)
    return tuple(out)


def _split(loop: Loop) -> tuple[list, tuple]:
    if loop.cond is not None or loop.var not in names_read(loop.body):
        return [], loop.body  # a guard loop (0 or 1 trips): hoisting would run it unconditionally
    allocs = {s.name: s for s in loop.body if isinstance(s, Alloc)}
    writers: dict[str, int] = {}
    for s in loop.body:
        for name in _written(s):
            writers[name] = writers.get(name, 0) + 1
    movable: set[str] = set()
    widened: set[str] = set()
    for s in loop.body:
        if not isinstance(s, Load) or s.dst.tensor not in allocs:
            continue
        alloc = allocs[s.dst.tensor]
        if writers.get(s.dst.tensor) != 1:
            continue
        if _tiles_read(s) & writers.keys():  # a gather's offsets computed in the loop
            continue
        if loop.var in _syms(alloc) or loop.var in _syms(s):
            if not _widens(loop, alloc, s):
                continue
            widened.add(s.dst.tensor)
        movable.add(s.dst.tensor)
    first = _at_first(loop)
    hoisted = [
        transform(s, first, skip=(View,)) if isinstance(s, Alloc) and s.name in widened else s
        for s in loop.body
        if _tile_of(s) in movable
    ]
    hoisted = [
        s.replace(dst=transform(s.dst, first))
        if isinstance(s, Load) and _tile_of(s) in widened
        else s
        for s in hoisted
    ]
    kept = tuple(s for s in loop.body if _tile_of(s) not in movable)
    return hoisted, kept


def _widens(loop: Loop, alloc: Alloc, load: Load) -> bool:
    """A load of the same HBM elements in every trip into a tile whose extents shrink with the
    loop (a value broadcast over a ragged row tile: ``min(128, R - 128 * t)`` partitions): loaded
    once at the first trip's extents, the largest, of which each trip reads its first rows.
    Only for a loop from 0: a later first trip (``range(1, T)``, the tiles after a peeled one)
    may not run at all, and its extents then need not be sizes (``min(128, R - 128)``)."""
    if loop.start != Const(0) or loop.var in _syms(load.src) or _tiles_read(load):
        return False
    if any(loop.var in _syms(getattr(d, "start", Const(0))) for d in load.dst.dims):
        return False
    return all(_direction(e, loop.var) in (0, -1) for e in alloc.shape)


def _at_first(loop: Loop):
    var, start = Sym(loop.var), loop.start

    def fn(x):  # noqa: ANN001, ANN202
        return start if x == var else x

    return fn


def _direction(e: SizeExpr, var: str) -> int | None:
    """How ``e`` moves as ``var`` grows (sizes are non-negative): 0 not at all, 1 up, -1 down,
    None either or unknown."""
    if isinstance(e, Sym):
        return 1 if e.name == var else 0
    if isinstance(e, Const):
        return 0
    if var not in e.free_syms():
        return 0
    a, b = _direction(e.a, var), _direction(e.b, var)
    if isinstance(e, Add | Min | Max):
        return _combine(a, b)
    if isinstance(e, Sub):
        return _combine(a, None if b is None else -b)
    if isinstance(e, Mul):
        for x, dy in ((e.a, b), (e.b, a)):
            if isinstance(x, Const) and dy is not None:
                return dy if x.value >= 0 else -dy
        return None
    if isinstance(e, FloorDiv | CeilDiv) and isinstance(e.b, Const) and e.b.value > 0:
        return a
    return None


def _combine(a: int | None, b: int | None) -> int | None:
    if a is None or b is None:
        return None
    if a == 0 or a == b:
        return b
    return a if b == 0 else None


def _tiles_read(s: Load) -> set[str]:
    """The on-chip tiles a load reads besides HBM: the offsets of an indirect (gather) view."""
    from cuda2nki.ir.nodes import View
    from cuda2nki.rewrite import nodes

    return {x.tensor for x in nodes(s.src) if isinstance(x, View) and x is not s.src}


def _tile_of(s) -> str | None:
    if isinstance(s, Alloc):
        return s.name
    if isinstance(s, Load):
        return s.dst.tensor
    return None


def _written(s) -> list[str]:
    if isinstance(s, Alloc):
        return []
    if isinstance(s, Loop):
        return [n for x in s.body for n in _written(x)]
    dst = getattr(s, "dst", None)
    out = [dst.tensor] if dst is not None and hasattr(dst, "tensor") else []
    red = getattr(s, "reduce_dst", None)
    if red is not None:
        out.append(red.tensor)
    return out


def names_read(node) -> set[str]:
    """The size symbols ``node`` mentions and the scalars it reads as operands (``Param``, which
    is also how a loop variable used as a value, ``(float)(k + 1)``, appears)."""
    from cuda2nki.ir.nodes import Param
    from cuda2nki.rewrite import nodes

    return _syms(node) | {x.name for x in nodes(node) if isinstance(x, Param)}


def _syms(node) -> set[str]:
    from cuda2nki.ir.nodes import SizeExpr

    found: set[str] = set()

    def visit(x) -> None:
        if isinstance(x, SizeExpr):
            found.update(x.free_syms())
        elif isinstance(x, tuple | list):
            for y in x:
                visit(y)
        elif hasattr(x, "__dataclass_fields__"):
            for f in x.__dataclass_fields__:
                if f != "loc":
                    visit(getattr(x, f))

    visit(node)
    return found
