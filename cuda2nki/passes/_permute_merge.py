"""Permutations whose moved axes carry a contiguous neighbour: one transpose over merged axes.

``dst[n, h, w, c] = src[n, c, h, w]`` (NCHW -> NHWC) moves ``c`` past ``h`` and ``w``, which
stay next to each other, in the same order, in both tensors.  Transposed one ``(n, h)`` at a
time, each DMA moves ``W`` elements per partition row (160 B for ``W = 40``); read as the
matrix transpose of ``[C, H * W]`` per ``n`` it moves ``H * W`` elements per row on the load
side and the whole ``C`` channels of each position on the store side, and issues ``H`` times
fewer instructions.

:func:`merged_axis` finds such a neighbour: the fixed axis ``m`` just before the source's
columns ``b`` in both tensors, ``b`` the source's last (contiguous) dim and the rows ``a`` the
target's last, every extent the tensor's dim.  :func:`lower_merged` then emits, per value of
the remaining fixed axes and group of up to 512 source rows, chunks of up to
:data:`COLS_PER_CHUNK` merged columns: the group's rows loaded by one DMA each (overlap-free
``Rows`` of the flat tensor), transposed 128 x 128 through PSUM, and stored as rows of the
target (one position's run of rows per partition, ``Rows`` again).
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.ir.nodes import (
    Alloc,
    CeilDiv,
    Compute,
    Const,
    Loop,
    Min,
    Read,
    Rows,
    SizeExpr,
    Slice,
    Store,
    TensorCopy,
    TensorDecl,
    TensorTranspose,
    View,
)
from cuda2nki.ir.nodes import Load as LoadStmt
from cuda2nki.ir.ops import Buffer
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._index import plus

#: merged columns staged per block of rows (8 KiB of fp32 per partition and block)
COLS_PER_CHUNK = 2048


@dataclass(frozen=True)
class Merge:
    """``m`` (a fixed axis) folded into the source's columns ``b``; ``a``: the source's rows."""

    m: str
    a: str
    b: str


def merged_axis(
    src_names: tuple[str, ...],
    dst_names: tuple[str, ...],
    fixed: set[str],
    extents: dict[str, SizeExpr],
    decls: tuple[TensorDecl, TensorDecl],
) -> Merge | None:
    """The fixed axis that merges into the columns, or None (see the module docstring)."""
    src, dst = decls
    if len(src_names) < 3 or src_names[-2] not in fixed or dst_names[-1] in fixed:
        return None
    m, b, a = src_names[-2], src_names[-1], dst_names[-1]
    if a in fixed or b in fixed or a == b:
        return None
    k = dst_names.index(m) if m in dst_names else -1
    if k < 0 or k + 1 >= len(dst_names) or dst_names[k + 1] != b:
        return None
    for names, decl in ((src_names, src), (dst_names, dst)):
        if len(decl.shape) != len(names):
            return None
        dims = dict(zip(names, decl.shape))
        if any(dims[x] != extents[x] for x in (m, b, a)):
            return None
    return Merge(m, a, b)


def strides(decl: TensorDecl) -> list[SizeExpr]:
    """Elements between neighbours of each dim (row-major)."""
    out: list[SizeExpr] = []
    acc: SizeExpr = Const(1)
    for d in reversed(decl.shape):
        out.append(acc)
        acc = d * acc if acc != Const(1) else d
    return out[::-1]


def _offset(names, decl: TensorDecl, at: dict[str, SizeExpr]) -> SizeExpr:
    """The flat offset of the element whose index is ``at`` (0 for the names not in it)."""
    off: SizeExpr = Const(0)
    for n, s in zip(names, strides(decl)):
        if n in at and at[n] != Const(0):
            off = plus(off, at[n] * s if s != Const(1) else at[n])
    return off


def lower_merged(lw, c: Compute, src: Read, merge: Merge, outer: tuple, group: int) -> None:
    """Emit the merged transpose of ``c`` (reading ``src``) into ``lw.b`` (``outer``: the
    fixed axes, ``group``: blocks of 128 source rows transposed into one PSUM tile)."""
    from cuda2nki.passes._analysis import sym_names

    sdecl, ddecl = lw.decl(src.tensor), lw.decl(c.target.tensor)
    snames, dnames = sym_names(src.index), sym_names(c.target.index)
    ext = {a.name: a.extent for a in c.domain.axes}
    P = 128
    fixed = {a.name: T.Sym(a.name) for a in outer if a.name != merge.m}
    cols_all = ext[merge.m] * ext[merge.b]
    GP = P * group
    b = lw.b
    tg, tq, ti, tj = b.fresh("g"), b.fresh("q"), b.fresh("t"), b.fresh("u")
    g0 = T.Const(GP) * T.Sym(tg)
    gs = Min(GP, ext[merge.a] - g0)  # source rows of this group
    blocks = CeilDiv(gs, P)
    q0 = T.Const(COLS_PER_CHUNK) * T.Sym(tq)
    qn = Min(COLS_PER_CHUNK, cols_all - q0)  # merged columns of this chunk
    r0, j0 = T.Const(P) * T.Sym(ti), T.Const(P) * T.Sym(tj)
    rs, cs = Min(P, gs - r0), Min(P, qn - j0)
    chunk = b.nested()
    blk = chunk.fresh(f"{src.tensor}_t")
    chunk.emit(Alloc(blk, (Min(P, gs), blocks * qn), sdecl.dtype, Buffer.SBUF, loc=src.loc))
    load = chunk.nested()
    a_stride = strides(sdecl)[snames.index(merge.a)]
    start = plus(_offset(snames, sdecl, {**fixed, merge.a: plus(g0, r0)}), q0)
    rows = View(src.tensor, (Rows(start, rs, a_stride, qn),))
    load.emit(LoadStmt(View(blk, (Slice(0, rs), Slice(qn * T.Sym(ti), qn))), rows, loc=src.loc))
    chunk.emit(Loop(ti, 0, blocks, body=tuple(load.stmts), loc=c.loc))
    tb = chunk.nested()
    ps = tb.fresh(f"{src.tensor}_tp")
    tb.emit(Alloc(ps, (cs, gs), sdecl.dtype, Buffer.PSUM, loc=c.loc))
    part = View(blk, (Slice(0, rs), Slice(plus(qn * T.Sym(ti), j0), cs)))
    turn = TensorTranspose(View(ps, (Slice(0, cs), Slice(r0, rs))), part, loc=c.loc)
    tb.emit(Loop(ti, 0, blocks, body=(turn,), loc=c.loc))
    res = tb.fresh(f"{c.target.tensor}_t")
    tb.emit(Alloc(res, (cs, gs), ddecl.dtype, Buffer.SBUF, loc=c.loc))
    tb.emit(TensorCopy(T.whole(res, cs, gs), T.whole(ps, cs, gs), loc=c.loc))
    b_stride = strides(ddecl)[dnames.index(merge.b)]
    pos = plus(q0, j0)  # the merged position of the block's first row
    dstart = plus(_offset(dnames, ddecl, {**fixed, merge.a: g0}), pos * b_stride)
    out = View(c.target.tensor, (Rows(dstart, cs, b_stride, gs),))
    tb.emit(Store(out, T.whole(res, cs, gs), loc=c.loc))
    chunk.emit(Loop(tj, 0, CeilDiv(qn, P), body=tuple(tb.stmts), loc=c.loc))
    nest = Loop(tq, 0, CeilDiv(cols_all, COLS_PER_CHUNK), body=tuple(chunk.stmts), loc=c.loc)
    nest = Loop(tg, 0, CeilDiv(ext[merge.a], GP), body=(nest,), loc=c.loc)
    for ax in reversed(outer):
        if ax.name != merge.m:
            nest = Loop(ax.name, 0, ax.extent, body=(nest,), loc=c.loc)
    b.emit(nest)
