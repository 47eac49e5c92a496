"""``one-hot-gather``: a gather along a row that a reduction already streams becomes a one-hot
selection reduced along that row.

``loss[i] = logsumexp(x[i, :]) - x[i, t[i]]`` reads the whole row ``x[i, :]`` for its reductions;
the element at the data-dependent column ``t[i]`` is then picked on chip instead of by a second,
element-sized indirect DMA: the column positions (an iota along the free axis) are compared with
the per-row index (one ``tensor_scalar`` ``equal``) and the selected row is summed::

    Before::  loss[i] = ... reduce(add, j < V: exp(x[i, j] - m)) ... - x[i, $(t[i])]
    After::   loss[i] = ... - reduce(add, g < V: (index(g) == t[i]) ? x[i, g] : 0)

Adding zeros is exact, so the selection is exactly ``x[i, t[i]]`` for an index in range; an index
outside ``[0, V)`` is undefined behaviour in CUDA (an out-of-bounds read) and selects 0 here.

Applies to a read whose one data-dependent index is not the first (a first-index gather is a
row gather: an indirect DMA of whole rows) and whose other indices are plain axes, and only where
the same Compute already reduces over that row of the same tensor (same other indices, an axis of
the tensor's extent there): the row is on chip anyway, so the selection costs one pass of the
vector engine over a row tile it already holds, never a fresh read of the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import (
    Axis,
    Binary,
    Compute,
    Dyn,
    Expr,
    IndexValue,
    Kernel,
    Lit,
    Read,
    Reduce,
    Select,
    Sym,
)
from cuda2nki.ir.ops import AxisKind, Op
from cuda2nki.passes._analysis import reads, transform
from cuda2nki.passes.base import Pass, PassContext


@dataclass(frozen=True)
class OneHotGatherPass(Pass):
    name: ClassVar[str] = "one-hot-gather"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        body = tuple(
            _rewrite(s, kernel) if isinstance(s, Compute) and s.accumulate is None else s
            for s in kernel.body
        )
        return kernel if body == kernel.body else kernel.replace(body=body)


def _rewrite(c: Compute, kernel: Kernel) -> Compute:
    streamed = _streamed_rows(c.expr, kernel)
    used = {a.name for a in c.domain.axes} | _axis_names(c.expr)

    def fn(node):
        if not isinstance(node, Read):
            return node
        pos = _free_gather(node)
        if pos is None or (node.tensor, pos, _others(node.index, pos)) not in streamed:
            return node
        return _one_hot(node, pos, kernel, _fresh(used))

    return c.replace(expr=transform(c.expr, fn))


def _free_gather(rd: Read) -> int | None:
    """Position of the one data-dependent index, if it is not the first and the rest are axes."""
    dyn = [p for p, ix in enumerate(rd.index) if isinstance(ix, Dyn)]
    if len(dyn) != 1 or dyn[0] == 0:
        return None
    if not all(isinstance(ix, Sym) for p, ix in enumerate(rd.index) if p != dyn[0]):
        return None
    return dyn[0]


def _others(index: tuple, pos: int) -> tuple:
    return tuple(ix for p, ix in enumerate(index) if p != pos)


def _streamed_rows(e: Expr, kernel: Kernel) -> set[tuple]:
    """``(tensor, position, other indices)`` of the rows a reduction in ``e`` reads whole."""
    out: set[tuple] = set()
    for red in _reduces(e):
        for ax in red.axes:
            for rd in reads(red.body):
                decl = kernel.tensors.get(rd.tensor)
                for p, ix in enumerate(rd.index):
                    whole = decl is not None and p < len(decl.shape)
                    if whole and isinstance(ix, Sym) and ix.name == ax.name:
                        if decl.shape[p] == ax.extent:
                            out.add((rd.tensor, p, _others(rd.index, p)))
    return out


def _reduces(e) -> list[Reduce]:
    found: list[Reduce] = []

    def fn(node):
        if isinstance(node, Reduce):
            found.append(node)
        return node

    transform(e, fn)
    return found


def _axis_names(e) -> set[str]:
    return {a.name for red in _reduces(e) for a in red.axes}


def _fresh(used: set[str]) -> str:
    n = 0
    while f"g{n}" in used:
        n += 1
    used.add(f"g{n}")
    return f"g{n}"


def _one_hot(rd: Read, pos: int, kernel: Kernel, axis: str) -> Reduce:
    decl = kernel.tensors[rd.tensor]
    g = Sym(axis)
    picked = Read(rd.tensor, tuple(g if p == pos else ix for p, ix in enumerate(rd.index)), rd.loc)
    hit = Binary(Op.EQ, IndexValue(g), rd.index[pos].expr, loc=rd.loc)
    zero = Lit(0.0 if "float" in decl.dtype else 0, decl.dtype)
    return Reduce(
        Op.ADD,
        (Axis(axis, decl.shape[pos], AxisKind.REDUCTION),),
        Select(hit, picked, zero, loc=rd.loc),
        acc_dtype=decl.dtype,
        loc=rd.loc,
    )
