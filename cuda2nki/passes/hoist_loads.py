"""``hoist-loads``: move loop-invariant tile loads out of loops so they are loaded once and reused.

Before::  for t in range(T):  g_t = sbuf[...] ; dma g_t <- g[0:C] ; ... uses g_t ...
After::   g_t = sbuf[...] ; dma g_t <- g[0:C] ; for t in range(T): ... uses g_t ...

A Load (with its Alloc) is hoisted when neither its tile shape nor its HBM view mentions the loop
variable, its tile is written by nothing else in the loop, no tile it reads (a gather's offsets)
is written in the loop, and the loop has at least one iteration
whenever the load would matter (hoisting runs the DMA once even for an empty loop, which is
harmless: tiles are private scratch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import Alloc, Kernel, Load, Loop
from cuda2nki.passes.base import Pass, PassContext


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
    for s in loop.body:
        if not isinstance(s, Load) or s.dst.tensor not in allocs:
            continue
        alloc = allocs[s.dst.tensor]
        if writers.get(s.dst.tensor) != 1:
            continue
        if loop.var in _syms(alloc) or loop.var in _syms(s):
            continue
        if _tiles_read(s) & writers.keys():  # a gather's offsets computed in the loop
            continue
        movable.add(s.dst.tensor)
    hoisted = [s for s in loop.body if _tile_of(s) in movable]
    kept = tuple(s for s in loop.body if _tile_of(s) not in movable)
    return hoisted, kept


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
