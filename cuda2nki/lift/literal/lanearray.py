"""Local arrays indexed by a per-thread value (literal lowering).

A thread's local array ``float r[K]`` is K tiles, one element per thread each (see
:meth:`~.lower.Lowerer.local_array`).  An index that differs between threads (``r[lane]``,
``acc[t % 4]``, ``h[(int)x[i] & 7]``) picks a different tile per thread: a read selects, for
every element ``k``, the threads whose index is ``k`` (``where(idx == k, r[k], ...)``), a write
updates tile ``k`` where the index is ``k`` and the thread is active.  That is exact for
indices inside the array; an index outside it (undefined in C) reads element 0 and writes
nothing.  Arrays of more than :data:`MAX_ELEMENTS` elements are refused (two instructions per
element per access).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.values import Idx, Lin, Local, Tile, Uni, Value, mul

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

MAX_ELEMENTS = 64


def lane_index(low: Lowerer, arr: Local, vals: list[Value], node: A.Node) -> Tile:
    """The flat element index of ``arr[vals...]`` as an int32 tile (row-major)."""
    if len(vals) != len(arr.dims):
        raise low.refuse("a row of a local array chosen by a per-thread value", node)
    n = _count(arr)
    if n > MAX_ELEMENTS:
        raise low.refuse(
            f"a local array of {n} elements indexed by a per-thread value (at most "
            f"{MAX_ELEMENTS} are selected thread by thread)",
            node,
        )
    strides = [str(_count_dims(arr.dims[k + 1 :])) for k in range(len(vals))]
    if all(isinstance(v, Uni | Lin | Idx) for v in vals):  # indices only: known when traced
        flat = " + ".join(mul(low.np_spell(v), s) for v, s in zip(vals, strides))
        return Tile(low.tile(Idx(f"({flat})"), "int", node), "int")
    terms = [
        (Uni(mul(v.expr, s), "int"), "1") if isinstance(v, Uni) else (v, s)
        for v, s in zip(vals, strides)
    ]
    return Tile(low.dyn_address(Lin("0", "0", "0"), terms, node), "int")


def read_element(low: Lowerer, arr: Local, idx: Tile) -> Tile:
    """Every thread's element ``arr[idx]``: a select over the elements."""
    out = low.fresh("pk")
    dt = low.dt(arr.ty)
    low.emit("op", dst=out, op="copy", args=f"{arr.expr}[0]", dtype=dt)
    for k in range(1, _count(arr)):
        hit = low.op("equal", [idx.expr, str(k)], "float").expr
        low.emit("where", dst=out, mask=hit, a=f"{arr.expr}[{k}]", b=out, dtype=dt)
    return Tile(out, arr.ty)


def write_element(
    low: Lowerer, arr: Local, idx: Tile, new: str, mask: str | None, line: int
) -> None:
    """``arr[idx] = new`` for the threads in ``mask`` (None: every thread)."""
    dt = low.dt(arr.ty)
    for k in range(_count(arr)):
        hit = low.op("equal", [idx.expr, str(k)], "float").expr
        hit = low.mask_and(mask, hit) or hit
        cur = f"{arr.expr}[{k}]"
        low.emit("where", line, dst=cur, mask=hit, a=new, b=cur, dtype=dt)


def _count(arr: Local) -> int:
    return _count_dims(arr.dims)


def _count_dims(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n
