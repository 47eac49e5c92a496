"""``common-tiles``: an engine instruction that recomputes a tile already computed is dropped,
its uses read the first tile; an instruction whose tile nothing reads is dropped.

Statements lifted one by one each recompute what they share: a layer norm's three outputs
(mean, rstd, out) each reduce the same row for the mean, two of them again for the variance.
Fused into one loop over row tiles, the repeats are the same instruction on the same tile.

Before::  red = reduce(add, x_t); div = red * (1/C); store mean <- div
          red1 = reduce(add, x_t); div1 = red1 * (1/C); sub = x_t - div1 ...
After::   red = reduce(add, x_t); div = red * (1/C); store mean <- div
          sub = x_t - div ...

An instruction is a repeat when it is the same instruction (op, sources, operands) writing a
whole fresh tile of the same shape and dtype, in the same block of statements, with nothing
written in between to its sources or to the first tile (a loop in between ends the match).
A fill (``memset``, ``iota``: an index grid each statement of a fused nest builds for itself)
is a repeat only where neither tile is written again: an accumulator starts with a memset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.diagnostics import UNKNOWN_LOC
from cuda2nki.ir.nodes import (
    Activation,
    Alloc,
    Const,
    Iota,
    Kernel,
    Loop,
    Memset,
    Slice,
    TensorBitcast,
    TensorCopy,
    TensorReduce,
    TensorScalar,
    TensorTensor,
    TensorTranspose,
    View,
)
from cuda2nki.passes._analysis import transform
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.rewrite import nodes

#: instructions whose only effect is their ``dst`` tile
_PURE = (
    TensorTensor, TensorScalar, TensorReduce, TensorCopy, TensorBitcast, TensorTranspose,
    Activation,
)  # fmt: skip
#: instructions that fill their ``dst`` tile from constants alone; one is a repeat only where
#: neither tile is written again (an accumulator starts with a memset too)
_FILLS = (Memset, Iota)


@dataclass(frozen=True)
class CommonTilesPass(Pass):
    name: ClassVar[str] = "common-tiles"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        writes = _write_counts(kernel.body)
        rename: dict[str, str] = {}
        body = _block(kernel.body, writes, rename)
        if rename:
            body = transform(body, lambda x: _renamed(x, rename))
        return kernel.replace(body=_drop_dead(body, kernel))


def _pure(s: Any) -> bool:
    return isinstance(s, _PURE) and not (isinstance(s, Activation) and s.reduce_dst is not None)


def _write_counts(body: tuple) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in nodes(body):
        for v in _dsts(s):
            out[v.tensor] = out.get(v.tensor, 0) + 1
    return out


def _dsts(s: Any) -> list[View]:
    if isinstance(s, Loop | Alloc) or not hasattr(s, "dst"):
        return []
    out = [s.dst] if isinstance(s.dst, View) else []
    extra = getattr(s, "reduce_dst", None)
    return out + ([extra] if isinstance(extra, View) else [])


def _reads(s: Any) -> set[str]:
    """Tensors ``s`` reads (every view but its destinations)."""
    dst = {id(v) for v in _dsts(s)}
    out: set[str] = set()
    for f in s.__dataclass_fields__:
        v = getattr(s, f)
        for x in nodes(v):
            if isinstance(x, View) and id(x) not in dst:
                out.add(x.tensor)
    return out


def _whole(v: View, alloc: Alloc) -> bool:
    if len(v.dims) != len(alloc.shape):
        return False
    return all(
        isinstance(d, Slice) and d.start == Const(0) and d.step == 1 and d.size == n
        for d, n in zip(v.dims, alloc.shape)
    )


def _key(s: Any) -> Any:
    """What makes two instructions the same computation: all but the destinations (an
    activation's row sum is a by-product), with the operand order of commutative ops ignored."""
    key = s.replace(dst=None, loc=UNKNOWN_LOC)
    if isinstance(s, Activation):
        key = key.replace(reduce_dst=None)
    if isinstance(s, TensorScalar):
        if s.op0.info.combiner:
            key = key.replace(reverse0=False)
        if s.op1 is not None and s.op1.info.combiner:
            key = key.replace(reverse1=False)
    return key


@dataclass
class _Avail:
    """A tile computed earlier in the block, by ``stmt``, from the tensors ``deps``."""

    tile: str
    deps: set[str]
    stmt: Any


def _block(body: tuple, writes: dict[str, int], rename: dict[str, str]) -> tuple:
    allocs: dict[str, Alloc] = {}
    avail: dict[Any, _Avail] = {}
    out: list = []
    for s in body:
        if rename:
            s = transform(s, lambda x: _renamed(x, rename))
        if isinstance(s, Loop):
            out.append(s.replace(body=_block(s.body, writes, rename)))
            avail.clear()
            continue
        if isinstance(s, Alloc):
            allocs[s.name] = s
            out.append(s)
            continue
        tile = s.dst.tensor if isinstance(s, _PURE + _FILLS) else None
        first = avail.get(_key(s)) if tile is not None else None
        if (
            first is not None
            and _fresh(s.dst, allocs, writes)
            and (not isinstance(s, _FILLS) or writes.get(first.tile) == 1)
            and allocs[tile].replace(name=first.tile, loc=UNKNOWN_LOC)
            == allocs[first.tile].replace(loc=UNKNOWN_LOC)
            and _share_row_sum(s, first, out, allocs, writes, rename)
        ):
            rename[tile] = first.tile
            out = [x for x in out if x is not allocs[tile]]
            continue
        written = {v.tensor for v in _dsts(s)}
        avail = {k: v for k, v in avail.items() if not (written & (v.deps | {v.tile}))}
        if tile is not None and tile in allocs and _whole(s.dst, allocs[tile]):
            avail[_key(s)] = _Avail(tile, _reads(s), s)
        out.append(s)
    return tuple(out)


def _fresh(v: View, allocs: dict[str, Alloc], writes: dict[str, int]) -> bool:
    """``v`` is the whole of a tile of this block written only here."""
    return v.tensor in allocs and writes.get(v.tensor) == 1 and _whole(v, allocs[v.tensor])


def _share_row_sum(
    s: Any,
    first: _Avail,
    out: list,
    allocs: dict[str, Alloc],
    writes: dict[str, int],
    rename: dict[str, str],
) -> bool:
    """Whether the repeat ``s`` can go, its row sum (if any) coming from ``first``: the same
    sum tile (renamed), or one ``first`` now writes too (a softmax's exp, computed once for its
    sum and its output).  ``out`` is updated in place."""
    extra = getattr(s, "reduce_dst", None)
    if extra is None:
        return True
    if not _fresh(extra, allocs, writes):
        return False
    have = first.stmt.reduce_dst
    if have is not None:
        if allocs[extra.tensor].replace(name=have.tensor, loc=UNKNOWN_LOC) != allocs[
            have.tensor
        ].replace(loc=UNKNOWN_LOC):
            return False
        rename[extra.tensor] = have.tensor
        out[:] = [x for x in out if x is not allocs[extra.tensor]]
        return True
    at = next(i for i, x in enumerate(out) if x is first.stmt)
    if any(extra.tensor in _reads(x) for x in out[at:] if not isinstance(x, Alloc)):
        return False
    merged = first.stmt.replace(reduce_dst=extra)
    out[:] = [x for x in out if x is not allocs[extra.tensor]]
    out[at : at + 1] = [allocs[extra.tensor], merged]
    first.stmt = merged
    return True


def _renamed(x: Any, rename: dict[str, str]) -> Any:
    if isinstance(x, View) and x.tensor in rename:
        return x.replace(tensor=rename[x.tensor])
    return x


def _drop_dead(body: tuple, kernel: Kernel) -> tuple:
    """``body`` without pure instructions (and their tiles) whose tile nothing reads."""
    while True:
        stmts = list(_stmts(body))
        read = set().union(*(_reads(s) for s in stmts if not isinstance(s, Alloc)))
        allocated = {s.name for s in stmts if isinstance(s, Alloc)}
        dead = {
            s.dst.tensor
            for s in stmts
            if _pure(s) and s.dst.tensor in allocated and s.dst.tensor not in read
        } - set(kernel.tensors)
        if not dead:
            return body
        body = _without(body, dead)


def _stmts(body: tuple):
    for s in body:
        if isinstance(s, Loop):
            yield from _stmts(s.body)
        else:
            yield s


def _without(body: tuple, dead: set[str]) -> tuple:
    out = []
    for s in body:
        if isinstance(s, Loop):
            out.append(s.replace(body=_without(s.body, dead)))
        elif isinstance(s, Alloc) and s.name in dead:
            continue
        elif _pure(s) and s.dst.tensor in dead:
            continue
        else:
            out.append(s)
    return tuple(out)
