"""``lower-tiles`` for the ``matmul`` layout: ``out[i, j] = epilogue(sum_k L(i, k) * R(k, j))``
on the tensor engine, its products, accumulation in PSUM and epilogue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cuda2nki.ir import uniform
from cuda2nki.ir.nodes import (
    Alloc,
    At,
    Cast,
    CeilDiv,
    Compute,
    Const,
    Loop,
    Matmul,
    Min,
    Read,
    Reduce,
    Slice,
    Store,
    TensorCopy,
    View,
)
from cuda2nki.ir.ops import Buffer, LoopKind
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import attrs, contractions, strip_cast, sym_names
from cuda2nki.passes._index import BCAST, FULL, ROW, SCALAR, access_class, dims_for
from cuda2nki.passes._lower_common import _axis, _cap, _EpilogueCompiler, _outer
from cuda2nki.passes._matmul_blocks import _Dims, _MatmulBlocking, _needs_transpose

if TYPE_CHECKING:  # the lowering owns the matmul; imported for its type only
    from cuda2nki.passes.lower_tiles import _Lowering


@dataclass(frozen=True)
class _Term:
    """One product ``sum_k L * R`` of a matmul statement: its reduction, axis, extent and
    operands (``L`` stationary, ``R`` moving)."""

    r: Reduce
    k: str
    K: Any
    L: Read
    R: Read


@dataclass(frozen=True)
class _Block:
    """The output block of the unblocked matmul nest: tile sizes, block origin and extent,
    output axes, column extent and the operand dtype."""

    P: int
    TM: int
    TN: int
    m0: Any
    ms: Any
    n0: Any
    ns: Any
    i_ax: str | None
    j_ax: str | None
    N: Any
    dtype: str


@dataclass
class _Matmul(_MatmulBlocking):
    """``out[i, j] = epilogue(sum_k L(i, k) * R(k, j))`` on the tensor engine.

    L supplies the stationary operand ``[K, M]`` (transposed through PSUM when it is stored
    ``[M, K]``), R the moving operand ``[K, N]``; either may lack its output axis (GEMV, vector x
    matrix).  The contraction is tiled K=128 x M=128 x N=512 with the first K tile peeled so that
    it overwrites the fp32 PSUM accumulator and the others accumulate.  Stationary tiles of one M
    block are loaded once and reused for every N block.
    """

    lw: _Lowering
    c: Compute
    b: T.Builder = field(init=False)

    def lower(self) -> None:
        c, lw = self.c, self.lw
        self.b = lw.b
        products = contractions(c.expr)
        assert products
        r = products[0]
        a = attrs(c)
        P, TM, TN = (
            int(a.get("p_tile", "128")),
            int(a.get("m_tile", "128")),
            int(a.get("n_tile", "512")),
        )
        mm_dtype = a.get("mm_dtype", "float32")
        k = r.axes[0].name
        K = r.axes[0].extent
        body = strip_cast(r.body)
        ops = [strip_cast(body.a), strip_cast(body.b)]
        # batch axes (loops) and scalar parameters fixing a dim (``sum[r, q, p]``, one slice
        # per launch) both index the operands at one position
        fixed = tuple(n for n in a.get("fixed", "").split(",") if n)
        self.outer = tuple(a.name for a in _outer(c)) + fixed
        axes = tuple(n for n in c.domain.names if n not in self.outer)
        i_ax = axes[0] if len(axes) == 2 or _has_axis(ops, axes[0], first=True) else None
        j_ax = axes[1] if len(axes) == 2 else (None if i_ax else axes[0])
        L, R = self._split(ops, k, i_ax, j_ax)
        M = _axis(c, i_ax).extent if i_ax else Const(1)
        N = _axis(c, j_ax).extent if j_ax else Const(1)
        terms = [_Term(r, k, K, L, R)] + [self._term(x, i_ax, j_ax) for x in products[1:]]
        if any(_needs_transpose(t.R, t.k, self.outer) for t in terms):
            TN = min(TN, P)
        if len(terms) == 1 and i_ax and j_ax and not _needs_transpose(R, k, self.outer):
            dims = _Dims(P, TM, TN, K, CeilDiv(K, P), M, N, mm_dtype)
            nest = self._blocked(r, L, R, k, i_ax, j_ax, dims)
            if _needs_transpose(L, k, self.outer):  # row blocks outermost: R hoisted when narrow
                once = uniform.size_is(CeilDiv(N, self._column_block(dims)), 1, c.loc)
                hoisted = self._blocked(r, L, R, k, i_ax, j_ax, dims, hoist=True)
                nest = uniform.choose(once, tuple(hoisted), tuple(nest), c.loc)
            for ax in reversed(_outer(c)):  # batch axes: one matrix product per batch element
                nest = [Loop(ax.name, 0, ax.extent, body=tuple(nest), loc=c.loc)]
            self.b.stmts.extend(nest)
            return
        tm, tn = self.b.fresh("t"), self.b.fresh("u")
        m0 = T.Const(TM) * T.Sym(tm) if i_ax else Const(0)
        ms = Min(TM, M - m0) if i_ax else Const(1)
        n0 = T.Const(TN) * T.Sym(tn) if j_ax else Const(0)
        ns = Min(TN, N - n0) if j_ax else Const(1)
        pre: list = []
        mblock = self.b.nested()
        nblock = mblock.nested()
        accs: dict = {}
        blk = _Block(P, TM, TN, m0, ms, n0, ns, i_ax, j_ax, N, mm_dtype)
        for n, t in enumerate(terms):  # one PSUM accumulator per product, summed by the epilogue
            acc_v = self._product(t, blk, pre, mblock, nblock, share=len(terms))
            if n:  # an engine op reads at most one PSUM operand: the others move to SBUF
                sb = nblock.fresh("acc_s")
                nblock.emit(Alloc(sb, (ms, ns), "float32", Buffer.SBUF, loc=c.loc))
                nblock.emit(TensorCopy(T.whole(sb, ms, ns), acc_v, loc=c.loc))
                acc_v = T.whole(sb, ms, ns)
            accs[t.r] = acc_v
        stage = self._row_stage(mblock, ms, N) if i_ax and j_ax else None
        stage_v = None if stage is None else View(stage, (Slice(0, ms), Slice(n0, ns)))
        self._epilogue(nblock, r, accs[r], ms, ns, m0, n0, i_ax, j_ax, stage_v, others=accs)
        nloop = Loop(tn, 0, CeilDiv(N, TN), body=tuple(nblock.stmts), loc=c.loc) if j_ax else None
        mstmts = mblock.stmts + ([nloop] if nloop else nblock.stmts)
        if stage is not None:  # the row block's result, staged across its column blocks
            whole = self._target_view({i_ax: Slice(m0, ms), j_ax: Slice(0, N)})
            mstmts.append(Store(whole, T.whole(stage, ms, N), loc=c.loc))
        nest = [Loop(tm, 0, CeilDiv(M, TM), body=tuple(mstmts), loc=c.loc)] if i_ax else mstmts
        nest = pre + nest
        for ax in reversed(_outer(c)):  # batch axes: one matrix product per batch element
            nest = [Loop(ax.name, 0, ax.extent, body=tuple(nest), loc=c.loc)]
        self.b.stmts.extend(nest)

    def _term(self, r: Reduce, i_ax, j_ax) -> _Term:
        """A further product of the statement, its operands in stationary/moving order."""
        body = strip_cast(r.body)
        k = r.axes[0].name
        L, R = self._split([strip_cast(body.a), strip_cast(body.b)], k, i_ax, j_ax)
        return _Term(r, k, r.axes[0].extent, L, R)

    def _product(
        self, t: _Term, d: _Block, pre: list, mblock: T.Builder, nblock: T.Builder, share: int
    ) -> View:
        """One product on the output block: its stationary operand loaded per row block (into
        ``mblock``), its PSUM accumulator filled per column block (into ``nblock``)."""
        P, K, k = d.P, t.K, t.k
        KT = CeilDiv(K, P)
        cached = None
        if d.i_ax and d.j_ax and _needs_transpose(t.R, k, self.outer):
            cached = self._cache_transposed(
                pre, t.R, k, K, KT, P, d.TN, d.TM, d.j_ax, d.N, d.dtype, share=share
            )
        L, R = t.L, t.R
        st = mblock.fresh(f"{L.tensor}_T")
        mblock.emit(Alloc(st, (Const(P), KT, d.ms), d.dtype, Buffer.SBUF, loc=L.loc))
        if _needs_transpose(L, k, self.outer):  # the row block's rows, wide DMAs
            self._wide_rows(mblock, L, k, K, d.i_ax, (d.m0, d.ms), st, Const(0), d.dtype)
        else:
            kv = mblock.fresh("k")
            kb = mblock.nested()
            k0 = T.Const(P) * T.Sym(kv)
            ks = Min(P, K - k0)
            dst = View(st, (Slice(0, ks), At(T.Sym(kv)), Slice(0, d.ms)))
            self._operand(kb, L, k, k0, ks, d.i_ax, d.m0, d.ms, dst, d.dtype)
            mblock.emit(Loop(kv, 0, KT, body=tuple(kb.stmts), loc=L.loc))
        acc = nblock.fresh("acc")
        nblock.emit(Alloc(acc, (d.ms, d.ns), "float32", Buffer.PSUM, loc=self.c.loc))
        acc_v = T.whole(acc, d.ms, d.ns)
        for first in (True, False):
            kb2 = nblock.nested()
            kv2 = None if first else nblock.fresh("k")
            kk = Const(0) if first else T.Sym(kv2)
            k0 = T.Const(P) * kk if not first else Const(0)
            ks = Min(P, K - k0) if not first else Min(P, K)
            if cached is not None:  # R transposed once, before the row-block loop
                mv_v = View(cached, (Slice(0, ks), At(kk), Slice(d.n0, d.ns)))
            else:
                mv = kb2.fresh(f"{R.tensor}_t")
                kb2.emit(Alloc(mv, (ks, d.ns), d.dtype, Buffer.SBUF, loc=R.loc))
                mv_v = T.whole(mv, ks, d.ns)
                self._operand(kb2, R, k, k0, ks, d.j_ax, d.n0, d.ns, mv_v, d.dtype)
            st_v = View(st, (Slice(0, ks), At(kk), Slice(0, d.ms)))
            kb2.emit(Matmul(acc_v, st_v, mv_v, accumulate=not first, loc=self.c.loc))
            if first:
                nblock.stmts.extend(kb2.stmts)
            else:
                nblock.emit(
                    Loop(
                        kv2, 1, KT, kind=LoopKind.SEQUENTIAL, body=tuple(kb2.stmts), loc=self.c.loc
                    )
                )
        return acc_v

    def _epilogue(
        self,
        b: T.Builder,
        r: Reduce,
        acc_v: View,
        ms,
        ns,
        m0,
        n0,
        i_ax,
        j_ax,
        stage: View | None = None,
        others: dict | None = None,
    ) -> None:
        """The output block ``[m0 + ms, n0 + ns]`` from the accumulator: stored, or written
        into ``stage`` (a block of the result stored later by one DMA)."""
        c = self.c
        out = self.lw.decl(c.target.tensor)

        p_name, f_name = i_ax or "", j_ax or ""

        def reader(rd: Read) -> T.Val:
            """Epilogue operands on the output block (``beta * C[i, j]``, a bias ``b[j]``)."""
            got = access_class(rd.index, p_name, f_name) if p_name and f_name else None
            if (
                got is None
                or got[0] not in (FULL, ROW, BCAST, SCALAR)
                or self.lw.is_temp(rd.tensor)
            ):
                raise T.Unsupported(f"a matmul epilogue reading '{rd.tensor}'", rd.loc)
            cls, dims = got
            view = dims_for(dims, p_name, f_name, m0, ms, n0, ns)
            dt = self.lw.decl(rd.tensor).dtype
            if cls == FULL:
                return self.lw._load(b, rd, (ms, ns), view, T.FULL, dt)
            if cls == BCAST:
                return self.lw._load(b, rd, (ms, ns), view, T.FULL, dt)
            return self.lw._load(b, rd, (ms, Const(1)), view, T.ROW, dt)

        comp = _EpilogueCompiler(b, ms, ns, reader, self.lw.params, self.lw.ctx.diagnostics, c.loc)
        comp.result = r
        comp.acc = acc_v
        comp.others = others
        # index values on the output block (a causal mask ``k <= j``): iota tiles
        comp.index_map = {a: m for a, m in ((i_ax, (1, 0, m0)), (j_ax, (0, 1, n0))) if a}
        comp.full = (_cap(ms), _cap(ns))
        comp.loop_syms = frozenset(m0.free_syms() | n0.free_syms()) | {a.name for a in _outer(c)}
        expr = c.expr
        if stage is not None and isinstance(expr, Cast) and expr.dtype == out.dtype:
            expr = expr.x  # the copy into the staged block converts
        val = comp.compile(expr)
        if stage is not None:
            b.emit(TensorCopy(stage, val.operand, loc=c.loc))
            return
        if val.operand is acc_v or val.kind != T.FULL:
            res = b.fresh(f"{c.target.tensor}_t")
            b.emit(Alloc(res, (ms, ns), out.dtype, Buffer.SBUF, loc=c.loc))
            b.emit(
                TensorCopy(
                    T.whole(res, ms, ns), acc_v if val.operand is acc_v else val.operand, loc=c.loc
                )
            )
            src = T.whole(res, ms, ns)
        else:
            src = val.operand
        place = {i_ax: Slice(m0, ms), j_ax: Slice(n0, ns)}
        dims = tuple(
            At(ix) if not (isinstance(ix, T.Sym) and ix.name in place) else place[ix.name]
            for ix in c.target.index
        )
        b.emit(Store(View(c.target.tensor, dims), src, loc=c.loc))


def _has_axis(ops: list[Read], ax: str, first: bool) -> bool:
    return any(ax in (sym_names(o.index) or ()) for o in ops)
