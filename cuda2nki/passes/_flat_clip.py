"""The clipped fetch of flat rows (see :mod:`cuda2nki.passes._lower_rows`).

A read ``x[K*p + f + c]`` of a 1-D tensor on the row tile ``[r0, r0 + rows) x [0, K)`` covers
the elements ``[s, s + rows*K)`` of ``x`` with ``s = K*r0 + c``.  A neighbour read of a stencil
over one flat index (``col > 0 ? x[k - 1] : b``, ``row + 1 < h ? x[k + w] : b``) starts before
the tensor on the first tile (``c < 0``) or runs past its end on the last one; the kernel's
guard never picks those elements.  The tile is zero (or the guard's identity) and only the part
inside ``[0, bound)`` is fetched, in at most four DMAs, each behind a 0/1-trip loop so that the
sizes stay symbolic:

* the head: the row that holds the tensor's first element, from that element's column on;
* the whole rows after it that end inside the bound;
* the tail: the row the bound cuts, up to the bound (unless the head is that row).

Not a pass.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Add,
    Alloc,
    Const,
    Lit,
    Load,
    Loop,
    Max,
    Memset,
    Min,
    Mul,
    SizeExpr,
    Slice,
    Sub,
    Sym,
    View,
)
from cuda2nki.ir.ops import Buffer
from cuda2nki.passes import _tiles as T
from cuda2nki.passes.fold_sizes import fold_size


def never_negative(e: SizeExpr) -> bool:
    """``e`` is at least 0 for every size: a constant ``>= 0``, a size symbol, or sums and
    products of such."""
    e = fold_size(e)
    if isinstance(e, Const):
        return e.value >= 0
    if isinstance(e, Sym):
        return True
    if isinstance(e, Add | Mul):
        return never_negative(e.a) and never_negative(e.b)
    return False


def clipped_rows(b: T.Builder, tensor: str, start: SizeExpr, shape: tuple, bound, ident, dt, loc):
    """A ``rows x cols`` tile of the flat elements ``[start, start + rows*cols)`` of ``tensor``,
    those outside ``[0, bound)`` set to ``ident``."""
    rows, cols = shape
    name = b.fresh(f"{tensor}_t")
    b.emit(Alloc(name, (rows, cols), dt, Buffer.SBUF, loc=loc))
    b.emit(Memset(T.whole(name, rows, cols), Lit(ident, "float32"), loc=loc))
    avail = bound - start  # elements of the tensor from this tile's first element on
    full = Min(rows, Max(0, avail // cols))  # rows that end inside the bound
    first = Const(0)
    if not never_negative(start):
        skip = Max(0, Sub(Const(0), start))  # elements before the tensor's start
        first = Min(rows, (skip + (cols - 1)) // cols)  # the first row that starts inside it
        head = first - 1
        n_head = Min(first * cols, avail) - skip
        _piece(
            b,
            Load(
                View(name, (Slice(head, 1), Slice(skip - head * cols, n_head))),
                View(tensor, (Slice(start + skip, n_head),)),
                loc=loc,
            ),
            Min(Min(1, Max(n_head, 0)), Max(0, first)),
            loc,
        )
    count = full - first
    _piece(
        b,
        Load(
            View(name, (Slice(first, count), Slice(0, cols))),
            View(tensor, (Slice(start + first * cols, count * cols),)),
            loc=loc,
        ),
        Min(1, Max(0, count)),
        loc,
    )
    rem = avail - full * cols
    stop = Min(rows - full, Min(1, Max(rem, 0)))
    if first != Const(0):
        stop = Min(stop, Max(0, full - first + 1))
    _piece(
        b,
        Load(
            View(name, (Slice(full, 1), Slice(0, rem))),
            View(tensor, (Slice(start + full * cols, rem),)),
            loc=loc,
        ),
        stop,
        loc,
    )
    return T.Val(T.FULL, T.whole(name, rows, cols), dt)


def _piece(b: T.Builder, load: Load, trips: SizeExpr, loc) -> None:
    body = b.nested()
    body.emit(load)
    b.emit(Loop(b.fresh("g"), 0, trips, body=tuple(body.stmts), loc=loc))
