"""Per-row results stored as one row (part of ``lower-tiles``).

A row tile's per-row result ``y[i]`` (a row sum, an argmin, one value per partition) sits in a
``[rows, 1]`` tile; stored as it is, the DMA moves 4 bytes per partition: ``rows`` descriptors of
one element each.  The elements are consecutive in ``y``, so the tile is turned into a
``[1, rows]`` row by Vector-engine transposes of up to 32 partitions each (a data move: exact for
every dtype, integers included) and stored by one DMA of ``rows`` contiguous elements.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Alloc,
    CeilDiv,
    Const,
    Loop,
    Min,
    Slice,
    Store,
    Sym,
    TensorTranspose,
    View,
)
from cuda2nki.ir.ops import Buffer
from cuda2nki.passes import _tiles as T

#: partitions (and free elements) of one Vector-engine transpose
VECTOR_TRANSPOSE = 32


def store_as_row(b: T.Builder, target: str, dims: tuple, val: T.Val, rows, loc) -> bool:
    """Store the ``[rows, 1]`` result ``val`` into ``target[dims]`` (``rows`` consecutive
    elements) through a ``[1, rows]`` row; False (nothing emitted) where the result or the
    destination is not of that shape."""
    src = val.operand
    if not isinstance(src, View) or len(src.dims) != 2 or len(dims) != 1:
        return False
    part, col = src.dims
    dst = dims[0]
    if not all(isinstance(d, Slice) and d.step == 1 for d in (part, col, dst)):
        return False
    if col.size != Const(1) or part.size != rows or dst.size != rows:
        return False
    dtype = b.dtypes.get(src.tensor)
    if dtype is None:
        return False
    row = b.fresh(f"{target}_row")
    b.emit(Alloc(row, (Const(1), rows), dtype, Buffer.SBUF, loc=loc))
    q = b.fresh("q")
    q0 = Const(VECTOR_TRANSPOSE) * Sym(q)
    qn = Min(Const(VECTOR_TRANSPOSE), rows - q0)
    piece = View(src.tensor, (Slice(part.start + q0, qn), col))
    into = View(row, (Slice(0, 1), Slice(q0, qn)))
    body = (TensorTranspose(into, piece, loc=loc),)
    b.emit(Loop(q, 0, CeilDiv(rows, Const(VECTOR_TRANSPOSE)), body=body, loc=loc))
    b.emit(Store(View(target, dims), T.whole(row, 1, rows), loc=loc))
    return True
