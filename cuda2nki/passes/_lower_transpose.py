"""``lower-tiles`` for the ``transpose`` layout: row blocks transposed on the tensor engine in
groups, one PSUM bank and one store per group and column block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.ir.nodes import (
    Alloc,
    At,
    CeilDiv,
    Compute,
    Load,
    Loop,
    Min,
    Read,
    Slice,
    Store,
    TensorCopy,
    TensorTranspose,
    View,
)
from cuda2nki.ir.ops import Buffer
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import attrs, strip_cast, sym_names
from cuda2nki.passes._lower_common import _axis, _outer
from cuda2nki.passes._permute_merge import lower_merged, merged_axis

if TYPE_CHECKING:
    from cuda2nki.passes.lower_tiles import _Lowering

    _Base = _Lowering
else:
    _Base = object

#: row blocks of 128 one transpose group stages: 4 x 128 fp32 = one 2 KiB PSUM bank per partition
TRANSPOSE_GROUP = 4


class _TransposeLowering(_Base):
    """The ``transpose`` layout: a method mixed into the lowering (``lower_tiles._Lowering``)."""

    # ------------------------------------------------------------------ transpose
    def lower_transpose(self, c: Compute) -> None:
        """``out[j, i] = src[i, j]`` through the tensor engine, in groups of row blocks.

        A group is up to ``TRANSPOSE_GROUP`` blocks of 128 source rows, each loaded whole (every
        column) by one DMA; per block of 128 source columns, the group's blocks are transposed
        side by side into one PSUM bank and stored by one DMA of up to 2 KiB per partition."""
        src = strip_cast(c.expr)
        if not isinstance(src, Read) or sym_names(src.index) is None:
            raise T.Unsupported("a transpose that also computes", c.loc)
        P = int(attrs(c).get("p_tile", "128"))
        outer = _outer(c)
        fixed = {a.name for a in outer}
        names = sym_names(src.index)
        a_name, b_name = [n for n in names if n not in fixed]  # source rows, source columns
        merge = merged_axis(
            names,
            sym_names(c.target.index) or (),
            fixed,
            {a.name: a.extent for a in c.domain.axes},
            (self.decl(src.tensor), self.decl(c.target.tensor)),
        )
        if merge is not None and merge.a == a_name and merge.b == b_name:
            return lower_merged(self, c, src, merge, outer, TRANSPOSE_GROUP)
        ext_i, ext_j = _axis(c, a_name).extent, _axis(c, b_name).extent
        GP = P * TRANSPOSE_GROUP
        tg, ti, tj = self.b.fresh("g"), self.b.fresh("t"), self.b.fresh("u")
        g0 = T.Const(GP) * T.Sym(tg)
        gs = Min(GP, ext_i - g0)  # source rows in this group
        blocks = CeilDiv(gs, P)
        r0, j0 = T.Const(P) * T.Sym(ti), T.Const(P) * T.Sym(tj)
        rs, cs = Min(P, gs - r0), Min(P, ext_j - j0)
        dt_in = self.decl(src.tensor).dtype
        dt_out = self.decl(c.target.tensor).dtype
        group = self.b.nested()
        blk = group.fresh(f"{src.tensor}_t")
        group.emit(Alloc(blk, (Min(P, gs), blocks * ext_j), dt_in, Buffer.SBUF, loc=src.loc))

        def view(tensor: str, order, rows: Slice, cols: Slice) -> View:  # leading axes fixed
            span = {a_name: rows, b_name: cols}
            return View(tensor, tuple(span.get(n, At(T.Sym(n))) for n in order))

        load = group.nested()
        whole_rows = View(blk, (Slice(0, rs), Slice(ext_j * T.Sym(ti), ext_j)))
        load.emit(
            Load(
                whole_rows,
                view(src.tensor, names, Slice(g0 + r0, rs), Slice(0, ext_j)),
                loc=src.loc,
            )
        )
        group.emit(Loop(ti, 0, blocks, body=tuple(load.stmts), loc=c.loc))
        b = group.nested()
        ps = b.fresh(f"{src.tensor}_tp")
        b.emit(Alloc(ps, (cs, gs), dt_in, Buffer.PSUM, loc=c.loc))
        part = View(blk, (Slice(0, rs), Slice(ext_j * T.Sym(ti) + j0, cs)))
        turn = TensorTranspose(View(ps, (Slice(0, cs), Slice(r0, rs))), part, loc=c.loc)
        b.emit(Loop(ti, 0, blocks, body=(turn,), loc=c.loc))
        res = b.fresh(f"{c.target.tensor}_t")
        b.emit(Alloc(res, (cs, gs), dt_out, Buffer.SBUF, loc=c.loc))
        b.emit(TensorCopy(T.whole(res, cs, gs), T.whole(ps, cs, gs), loc=c.loc))
        tgt = sym_names(c.target.index)
        out = view(c.target.tensor, tgt, Slice(g0, gs), Slice(j0, cs))
        b.emit(Store(out, T.whole(res, cs, gs), loc=c.loc))
        group.emit(Loop(tj, 0, CeilDiv(ext_j, P), body=tuple(b.stmts), loc=c.loc))
        nest = Loop(tg, 0, CeilDiv(ext_i, GP), body=tuple(group.stmts), loc=c.loc)
        for ax in reversed(outer):
            nest = Loop(ax.name, 0, ax.extent, body=(nest,), loc=c.loc)
        self.b.emit(nest)
