"""``lower-tiles`` for the reductions: ``reduce-all`` (one value), ``scalar`` and ``colreduce``
(per-column sums and combines over row tiles).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cuda2nki.ir.nodes import (
    Alloc,
    Binary,
    CeilDiv,
    Compute,
    Const,
    Lit,
    Loop,
    Matmul,
    Max,
    Memset,
    Min,
    Read,
    Reduce,
    SizeExpr,
    Slice,
    Store,
    TensorCopy,
    TensorReduce,
    TensorTensor,
    TensorTranspose,
    View,
)
from cuda2nki.ir.ops import Buffer, LoopKind, Op
from cuda2nki.passes import _fold_columns as F
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import attrs, outermost
from cuda2nki.passes._index import ROW, SCALAR, access_class, dims_for
from cuda2nki.passes._lower_common import (
    _EpilogueCompiler,
    _reduces,
    _RowCompiler,
    _uses_index_value,
)
from cuda2nki.passes._merged_rows import merged_class, rows_of

if TYPE_CHECKING:
    from cuda2nki.passes.lower_tiles import _Lowering

    _Base = _Lowering
else:
    _Base = object


def guard_trips(cond) -> object | None:
    """A condition on scalar sizes as a trip count of 0 or 1 (None if it is not one)."""
    from cuda2nki.passes.guards_to_domains import _size

    if isinstance(cond, Binary) and cond.op == Op.LAND:
        a, b = guard_trips(cond.a), guard_trips(cond.b)
        return None if a is None or b is None else Min(a, b)
    if not isinstance(cond, Binary):
        return None
    a, b = _size(cond.a), _size(cond.b)
    if a is None or b is None:
        return None
    one = Const(1)
    if cond.op == Op.LT:
        return Min(one, Max(b - a, Const(0)))
    if cond.op == Op.LE:
        return Min(one, Max(b - a + one, Const(0)))
    if cond.op == Op.GT:
        return Min(one, Max(a - b, Const(0)))
    if cond.op == Op.GE:
        return Min(one, Max(a - b + one, Const(0)))
    if cond.op == Op.NE:  # |a - b| >= 1
        return Min(one, Max(a - b, b - a))
    if cond.op == Op.EQ:
        return one - Min(one, Max(a - b, b - a))
    return None


@dataclass(frozen=True)
class _Acc:
    view: View
    rows: object
    cols: object


def _no_reads(rd: Read) -> T.Val:
    raise T.Unsupported(f"an epilogue reading '{rd.tensor}' after a reduction", rd.loc)


class _ReduceLowering(_Base):
    """The reduction layouts: methods mixed into the lowering (``lower_tiles._Lowering``)."""

    # ------------------------------------------------------------------ reduce-all
    def lower_reduce_all(self, c: Compute) -> None:
        """Whole-vector reduction: flat [128, F] chunks reduced along the free axis into a
        [128, 1] fp32 accumulator, then across partitions (tensor-engine transpose + reduce)."""
        P, F0 = int(attrs(c).get("p_tile", "128")), int(attrs(c).get("f_tile", "4096"))
        if c.accumulate is not None and c.domain.axes:
            op, k_axis, body = c.accumulate, c.domain.axes[0], c.expr
            red = Reduce(op, (k_axis,), body, loc=c.loc)
        else:
            (red,) = outermost(_reduces(c.expr))  # nested ones: loops inside each chunk
            op, k_axis, body = red.op, red.axes[0], red.body
        acc = self.b.fresh("acc")
        self.b.emit(Alloc(acc, (Const(P), Const(1)), "float32", Buffer.SBUF, loc=c.loc))
        self.b.emit(Memset(T.whole(acc, P, 1), Lit(float(op.info.identity), "float32"), loc=c.loc))
        K = k_axis.extent
        # As for 1-D maps, a vector shorter than P * F0 spreads over the partitions.  Only in the
        # current API: the legacy form allocates F0-wide tiles and masks them, and its masked
        # free-axis reduction would take the masked-off columns in.
        spread = self.ctx.target == "nki" and not _uses_index_value(c)
        F: SizeExpr = Min(F0, Max(1, CeilDiv(K, P))) if spread else Const(F0)
        chunk = P * F
        parts = [
            (K // chunk, lambda v: chunk * T.Sym(v), Const(P), F),
            (Min(1, (K % chunk) // F), lambda v: (K // chunk) * chunk, (K % chunk) // F, F),
            (Min(1, K % F), lambda v: K - K % F, Const(1), K % F),
        ]
        for stop, base_of, rows, cols in parts:
            v = self.b.fresh("t")
            inner = self.b.nested()
            comp = self._flat_compiler(inner, rows, cols, c, base_of(v), axis=k_axis.name)
            part = comp.reduce_of(red)
            acc_v = View(acc, (Slice(0, rows), Slice(0, 1)))
            inner.emit(TensorTensor(acc_v, op, acc_v, part.operand, loc=c.loc))
            self.b.emit(
                Loop(v, 0, stop, kind=LoopKind.SEQUENTIAL, body=tuple(inner.stmts), loc=c.loc)
            )
        tp = self.b.fresh("acc_tp")
        self.b.emit(Alloc(tp, (Const(1), Const(P)), "float32", Buffer.PSUM, loc=c.loc))
        self.b.emit(TensorTranspose(T.whole(tp, 1, P), T.whole(acc, P, 1), loc=c.loc))
        total = self.b.fresh("total")
        self.b.emit(Alloc(total, (Const(1), Const(1)), "float32", Buffer.SBUF, loc=c.loc))
        self.b.emit(TensorReduce(T.whole(total, 1, 1), op, T.whole(tp, 1, P), axes=(1,), loc=c.loc))
        self._reduce_epilogue(c, red, op, T.Val(T.ROW, T.whole(total, 1, 1)))

    def _reduce_epilogue(self, c: Compute, red: Reduce, op, total: T.Val) -> None:
        b = self.b
        dims = tuple(Slice(d.c, 1) for d in access_class(c.target.index, "", "")[1])

        def reader(rd: Read) -> T.Val:
            got = access_class(rd.index, "", "")
            if got is None or got[0] != SCALAR:
                raise T.Unsupported(f"the access pattern of '{rd.tensor}'", rd.loc)
            view = tuple(Slice(d.c, 1) for d in got[1])
            return self._load(b, rd, (Const(1), Const(1)), view, T.ROW, self.decl(rd.tensor).dtype)

        comp = _EpilogueCompiler(
            b, Const(1), Const(1), reader, self.params, self.ctx.diagnostics, c.loc
        )
        comp.result, comp.acc = red, total.operand
        expr = c.expr
        if c.accumulate is not None:  # into the element: the domain's total, or a value of it
            add = red if c.domain.axes else c.expr
            expr = Binary(c.accumulate, Read(c.target.tensor, c.target.index), add)
        val = comp.materialize_row(comp.compile(expr))
        b.emit(Store(View(c.target.tensor, dims), val.operand, loc=c.loc))

    # ------------------------------------------------------------------ one element
    def lower_scalar(self, c: Compute) -> None:
        """A statement without an iteration domain on a [1, 1] tile; its guard (a condition on
        scalar sizes, ``n % 2 != 0``) becomes a loop of 0 or 1 trips."""
        trips = Const(1) if c.domain.guard is None else guard_trips(c.domain.guard)
        if trips is None:
            raise T.Unsupported("a guard on a single element that is not a size comparison", c.loc)
        b = self.b.nested()
        one = Const(1)

        def reader(rd: Read) -> T.Val:
            # a fixed element past a small tensor's end is only ever read by a select branch
            # that is not taken (CUDA never reads it): clamp it into the tensor
            shape = self.decl(rd.tensor).shape
            dims = access_class(rd.index, "", "")[1]
            view = tuple(
                Slice(Min(d.c, n - 1) if isinstance(d.c, Const) and d.c.value > 0 else d.c, 1)
                for d, n in zip(dims, shape)
            )
            return self._load(b, rd, (one, one), view, T.ROW, self.decl(rd.tensor).dtype)

        comp = self.typed(
            _RowCompiler(b, one, one, reader, self.params, self.ctx.diagnostics, c.loc)
        )
        val = comp.materialize_row(comp.compile(c.expr))
        dt = self.decl(c.target.tensor).dtype
        if val.dtype != dt:
            res = b.fresh(f"{c.target.tensor}_t")
            b.emit(Alloc(res, (one, one), dt, Buffer.SBUF, loc=c.loc))
            b.emit(TensorCopy(T.whole(res, 1, 1), val.operand, loc=c.loc))
            val = T.Val(T.ROW, T.whole(res, 1, 1), dt)
        dims = tuple(Slice(d.c, 1) for d in access_class(c.target.index, "", "")[1])
        b.emit(Store(View(c.target.tensor, dims), val.operand, loc=c.loc))
        if trips == Const(1):
            self.b.stmts.extend(b.stmts)
        else:
            self.b.emit(Loop(self.b.fresh("g"), 0, trips, body=tuple(b.stmts), loc=c.loc))

    # ------------------------------------------------------------------ column reduction
    def lower_colreduce(self, c: Compute) -> None:
        """``y[j] = reduce(op, i: f(x[i, j]))`` with ``i`` on partitions.  A sum is a matmul with a
        ones vector accumulated over row tiles in PSUM; max/min combine row tiles elementwise and
        finish across partitions through a tensor-engine transpose."""
        a = attrs(c)
        red = _reduces(c.expr)
        i_ax, j_ax = red[0].axes[0], c.domain.axes[0]
        P = int(a.get("p_tile", "128"))
        sums = all(r.op == Op.ADD for r in red)
        if not sums and self.ctx.target == "legacy":
            # the max/min path updates the first rows of a 128-row tile in its last, partial
            # row tile; the legacy API writes a masked instruction's result whole, so the other
            # rows (earlier tiles' maxima) would take the padding in
            raise T.Unsupported("a column max/min in the legacy API", c.loc)
        TN = int(a.get("n_tile", "512")) if sums else P
        fold = F.plan(self, c, red, i_ax, j_ax, P, TN)
        if fold is not None and F.lower(self, c, red, fold):
            return
        R, C = i_ax.extent, j_ax.extent
        u = self.b.fresh("u")
        c0 = T.Const(TN) * T.Sym(u)
        ns = Min(TN, C - c0)
        nb = self.b.nested()
        accs: dict = {}
        for r in red:
            if r in accs:
                continue
            if r.op == Op.ADD:
                acc = self._colsum(nb, c, r, i_ax.name, j_ax.name, R, P, c0, ns)
            else:
                acc = self._colcombine(nb, c, r, i_ax.name, j_ax.name, R, P, c0, ns)
            accs[r] = acc
        acc = accs[red[0]]
        per_column = self._per_column_reader(nb, j_ax.name, acc, c0, ns)
        comp = _EpilogueCompiler(
            nb, acc.rows, acc.cols, per_column, self.params, self.ctx.diagnostics, c.loc
        )
        comp.result, comp.acc, comp.kind = red[0], acc.view, T.FULL
        comp.others = {r: v.view for r, v in accs.items()}
        val = comp.compile(c.expr)
        res = nb.fresh(f"{c.target.tensor}_t")
        out_dt = self.decl(c.target.tensor).dtype
        nb.emit(Alloc(res, (acc.rows, acc.cols), out_dt, Buffer.SBUF, loc=c.loc))
        nb.emit(TensorCopy(T.whole(res, acc.rows, acc.cols), val.operand, loc=c.loc))
        _, tdims = access_class(c.target.index, j_ax.name, "")
        dims = dims_for(tdims, j_ax.name, "", c0, ns, Const(0), Const(1))
        nb.emit(Store(View(c.target.tensor, dims), T.whole(res, acc.rows, acc.cols), loc=c.loc))
        self.b.emit(Loop(u, 0, CeilDiv(C, TN), body=tuple(nb.stmts), loc=c.loc))

    def _per_column_reader(self, b: T.Builder, j: str, acc: _Acc, c0, ns):
        """Reads of an epilogue around column sums: one value per column (``dbias[j]``),
        loaded in the accumulator's orientation (a row of sums, or a column of maxima)."""

        def reader(rd: Read) -> T.Val:
            got = access_class(rd.index, j, "")
            if got is None or got[0] != ROW:
                return _no_reads(rd)
            dims = dims_for(got[1], j, "", c0, ns, Const(0), Const(1))
            kind = T.ROW if acc.cols == Const(1) else T.FULL
            return self._load(b, rd, (acc.rows, acc.cols), dims, kind, self.decl(rd.tensor).dtype)

        return reader

    def _row_tile_body(self, b, c, r, i, j, r0, rows, c0, ns) -> T.Val:
        def reader(rd: Read) -> T.Val:
            got = access_class(rd.index, i, j)
            merged = None
            if got is None:  # a read through merged rows: one strided block of the flat tensor
                cls, dims, merged = merged_class(rd.index, self.decl(rd.tensor).shape, i, j)
            else:
                cls, dims = got
            view = dims_for(dims, i, j, r0, rows, c0, ns)
            if merged is not None:
                view = rows_of(view, merged)
            if cls == ROW:  # x[i]: one value per partition, the same along the row (A^T x)
                return self._load(b, rd, (rows, Const(1)), view, T.ROW, self.decl(rd.tensor).dtype)
            return self._load(b, rd, (rows, ns), view, T.FULL, self.decl(rd.tensor).dtype)

        comp = self.typed(
            _RowCompiler(b, rows, ns, reader, self.params, self.ctx.diagnostics, c.loc)
        )
        return comp.as_full(comp.compile(r.body))

    def _colsum(self, nb, c, r, i, j, R, P, c0, ns) -> _Acc:
        """Column sums as ``ones^T @ body``: a ``(1, ns)`` row accumulated in PSUM."""
        acc = nb.fresh("acc")
        shape = (Const(1), ns)
        nb.emit(Alloc(acc, shape, "float32", Buffer.PSUM, loc=c.loc))
        acc_v = T.whole(acc, *shape)
        for first in (True, False):
            kb = nb.nested()
            t = None if first else nb.fresh("t")
            r0 = Const(0) if first else T.Const(P) * T.Sym(t)
            rows = Min(P, R - r0) if not first else Min(P, R)
            body = self._row_tile_body(kb, c, r, i, j, r0, rows, c0, ns)
            ones = kb.fresh("ones")
            kb.emit(Alloc(ones, (rows, Const(1)), body.dtype, Buffer.SBUF, loc=c.loc))
            kb.emit(Memset(T.whole(ones, rows, 1), Lit(1.0, "float32"), loc=c.loc))
            kb.emit(
                Matmul(acc_v, T.whole(ones, rows, 1), body.operand, accumulate=not first, loc=c.loc)
            )
            if first:
                nb.stmts.extend(kb.stmts)
            else:
                nb.emit(
                    Loop(
                        t,
                        1,
                        CeilDiv(R, P),
                        kind=LoopKind.SEQUENTIAL,
                        body=tuple(kb.stmts),
                        loc=c.loc,
                    )
                )
        return _Acc(acc_v, *shape)

    def _colcombine(self, nb, c, r, i, j, R, P, c0, ns) -> _Acc:
        part = nb.fresh("part")
        nb.emit(Alloc(part, (Const(P), ns), "float32", Buffer.SBUF, loc=c.loc))
        nb.emit(Memset(T.whole(part, P, ns), Lit(float(r.op.info.identity), "float32"), loc=c.loc))
        t = nb.fresh("t")
        kb = nb.nested()
        r0 = T.Const(P) * T.Sym(t)
        rows = Min(P, R - r0)
        body = self._row_tile_body(kb, c, r, i, j, r0, rows, c0, ns)
        pv = View(part, (Slice(0, rows), Slice(0, ns)))
        kb.emit(TensorTensor(pv, r.op, pv, body.operand, loc=c.loc))
        nb.emit(
            Loop(t, 0, CeilDiv(R, P), kind=LoopKind.SEQUENTIAL, body=tuple(kb.stmts), loc=c.loc)
        )
        tp = nb.fresh("part_tp")
        nb.emit(Alloc(tp, (ns, Const(P)), "float32", Buffer.PSUM, loc=c.loc))
        nb.emit(TensorTranspose(T.whole(tp, ns, P), T.whole(part, P, ns), loc=c.loc))
        acc = nb.fresh("acc")
        nb.emit(Alloc(acc, (ns, Const(1)), "float32", Buffer.SBUF, loc=c.loc))
        nb.emit(TensorReduce(T.whole(acc, ns, 1), r.op, T.whole(tp, ns, P), axes=(1,), loc=c.loc))
        return _Acc(T.whole(acc, ns, 1), ns, Const(1))
