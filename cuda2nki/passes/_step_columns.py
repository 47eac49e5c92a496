"""Per-step columns of a row tile, loaded once ahead of a rolled loop (part of ``lower-tiles``).

Inside a reduction rolled into a sequential loop over ``k`` (``sum_k (p[i, k] - c[j, k])^2``,
one step per CUDA iteration), a read ``x[i, c + k]`` takes one element per partition each step:
one DMA of 4 bytes per partition per step.  The elements of all the steps are the row block
``x[rows, c : c + K]``, contiguous in each row: one DMA ahead of the loop moves them all, and
step ``k`` reads column ``k`` of that tile.  Only where the tile fits
:data:`STEP_BYTES` per partition at the binding's sizes (otherwise the per-step loads stay).
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Alloc,
    At,
    CeilDiv,
    Lit,
    Load,
    Loop,
    Matmul,
    Memset,
    Min,
    Slice,
    Sym,
    View,
)
from cuda2nki.ir.ops import Buffer
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._index import affine1
from cuda2nki.passes._window import simple

#: bytes per partition the steps' row block may take
STEP_BYTES = 16 * 1024


def row_steps(b: T.Builder, loops: list, rd, view: tuple, rows, dt: str, fits) -> T.Val | None:
    """The step's column of the ``[rows, K]`` block of ``rd`` (``x[i, c + k]``, ``k`` the
    innermost rolled loop, moving the tensor's last dim), the block loaded ahead of the loop;
    None where the read is not such a step or the block would not fit (``fits(K)`` is False)."""
    if not loops:
        return None
    loop = loops[-1]
    last = view[-1] if view else None
    if not isinstance(last, At) or loop.axis not in last.index.free_syms():
        return None
    at = affine1(simple(last.index), frozenset({loop.axis}))
    if at is None or at.axis != loop.axis or at.k != 1:
        return None
    if any(loop.axis in _syms(d) for d in view[:-1]) or loop.axis in _syms_of(rows, loop.extent):
        return None
    if [d for d in view[:-1] if isinstance(d, Slice)] == [] or not fits(loop.extent):
        return None
    wide = (*view[:-1], Slice(at.c, loop.extent))
    key = ("row-steps", rd.tensor, wide, rows)
    if key not in loop.tiles:
        name = b.fresh(f"{rd.tensor}_rows")
        loop.before.append(Alloc(name, (rows, loop.extent), dt, Buffer.SBUF, loc=rd.loc))
        whole = T.whole(name, rows, loop.extent)
        loop.before.append(Load(whole, View(rd.tensor, wide), loc=rd.loc))
        loop.tiles[key] = name
    step = View(loop.tiles[key], (Slice(0, rows), Slice(Sym(loop.axis), 1)))
    return T.Val(T.ROW, step, dt)


def _syms(d) -> frozenset:
    if isinstance(d, At):
        return d.index.free_syms()
    if isinstance(d, Slice):
        return d.start.free_syms() | d.size.free_syms()
    return frozenset({"?"})  # another kind of dim: treated as moving


def _syms_of(*sizes) -> frozenset:
    out: frozenset = frozenset()
    for s in sizes:
        out |= s.free_syms()
    return out


#: bytes the steps' rows of a broadcast operand may take on their one partition
BCAST_STEP_BYTES = 96 * 1024
#: fp32 elements of one PSUM bank: the most columns one matmul writes
PSUM_BANK = 512


def bcast_steps(b: T.Builder, loops: list, rd, view: tuple, rows, cols, dt: str, fits):
    """The step's row of ``rd`` (``c[j, k]``: the same for every partition, ``j`` the tile's
    free axis, ``k`` the innermost rolled loop moving the tensor's last dim) broadcast over the
    ``rows`` partitions by the tensor engine: the ``[cols, K]`` block is loaded once, contiguous,
    onto one partition ahead of the loop (the load does not depend on the row tile, so
    ``hoist-loads`` lifts it out of the row loop too), and each step multiplies a ones row by
    its column ``k`` (one exact product per element) into PSUM.  A DMA broadcast per step would
    move the block ``rows`` times per row tile.  None where the read is not such a step or the
    block would not fit (``fits(cols * K)`` is False)."""
    if not loops or len(view) < 2 or not isinstance(view[-2], Slice):
        return None
    loop = loops[-1]
    last = view[-1]
    if not isinstance(last, At) or loop.axis not in last.index.free_syms():
        return None
    at = affine1(simple(last.index), frozenset({loop.axis}))
    if at is None or at.axis != loop.axis or at.k != 1 or view[-2].step != 1:
        return None
    if any(loop.axis in _syms(d) for d in view[:-1]) or loop.axis in _syms_of(rows, cols):
        return None
    if any(not isinstance(d, At) for d in view[:-2]) or not fits(cols * loop.extent):
        return None
    wide = (*view[:-1], Slice(at.c, loop.extent))
    key = ("bcast-steps", rd.tensor, wide, rows)
    if key not in loop.tiles:
        name, ones = b.fresh(f"{rd.tensor}_steps"), b.fresh("ones")
        shape = (T.Const(1), cols, loop.extent)
        loop.before.append(Alloc(name, shape, dt, Buffer.SBUF, loc=rd.loc))
        loop.before.append(Load(T.whole(name, *shape), View(rd.tensor, wide), loc=rd.loc))
        loop.before.append(Alloc(ones, (T.Const(1), rows), dt, Buffer.SBUF, loc=rd.loc))
        ones_v = T.whole(ones, 1, rows)
        loop.before.append(Memset(ones_v, Lit(1.0, "float32"), loc=rd.loc))
        loop.tiles[key] = (name, ones_v)
    name, ones_v = loop.tiles[key]
    bc = b.fresh(f"{rd.tensor}_bc")
    b.emit(Alloc(bc, (rows, cols), "float32", Buffer.PSUM, loc=rd.loc))
    v = b.fresh("v")
    v0 = T.Const(PSUM_BANK) * Sym(v)
    vn = Min(T.Const(PSUM_BANK), cols - v0)
    row = View(name, (Slice(0, 1), Slice(v0, vn), At(Sym(loop.axis))))
    dst = View(bc, (Slice(0, rows), Slice(v0, vn)))
    mm = Matmul(dst, ones_v, row, accumulate=False, loc=rd.loc)
    b.emit(Loop(v, 0, CeilDiv(cols, T.Const(PSUM_BANK)), body=(mm,), loc=rd.loc))
    return T.Val(T.FULL, T.whole(bc, rows, cols), "float32")
