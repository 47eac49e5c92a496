"""Blocking a ``lower-tiles`` matmul to SBUF: the budgets, the blocked nest, and the staging and
caching of its stationary and moving operands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cuda2nki.ir.nodes import (
    Alloc,
    At,
    CeilDiv,
    Const,
    FloorDiv,
    Load,
    Loop,
    Matmul,
    Max,
    Min,
    Read,
    Reduce,
    SizeExpr,
    Slice,
    Store,
    TensorCopy,
    TensorTranspose,
    View,
)
from cuda2nki.ir.ops import Buffer, LoopKind
from cuda2nki.passes import _fold_columns as F
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import sym_names
from cuda2nki.passes._lower_common import itemsize
from cuda2nki.passes._wide_rows import ROW_CHUNK, transposed_rows

if TYPE_CHECKING:
    from cuda2nki.passes._lower_matmul import _Matmul

    _Base = _Matmul
else:
    _Base = object

#: bytes per partition a cached transposed operand may take (with its stationary neighbour):
#: a third of the usable SBUF partition, the rest stays for the blocks being computed
CACHE_BUDGET = 64 * 1024
#: bytes per partition a staged row block of a matmul result may take (one store per row block)
STAGE_BUDGET = 16 * 1024

#: bytes per partition the two resident blocks of a blocked matmul take together: the moving
#: operand's column block (at most :data:`CACHE_BUDGET`) and the transposed stationary operand's
#: row block, which takes the rest; what is left of the usable SBUF partition holds one row block
#: of the stationary operand staged for its transposes
BLOCKS_BUDGET = 160 * 1024


# ---------------------------------------------------------------------- matmul lowering


@dataclass(frozen=True)
class _Dims:
    """Tile sizes and extents of one contraction: partitions (K tile) ``P``, row tile ``TM``,
    column tile ``TN``, contraction extent ``K`` in ``KT`` tiles, result ``M`` x ``N``."""

    P: int
    TM: int
    TN: int
    K: Any
    KT: Any
    M: Any
    N: Any
    dtype: str


def _needs_transpose(o: Read, k: str, outer: tuple = ()) -> bool:
    names = tuple(n for n in (sym_names(o.index) or ()) if n not in outer)
    return len(names) == 2 and names[0] != k


class _MatmulBlocking(_Base):
    """The blocking and operand methods of :class:`~cuda2nki.passes._lower_matmul._Matmul`."""

    def _column_block(self, d: _Dims) -> SizeExpr:
        """``NB``: the columns of the moving operand resident at once, TN-wide chunks that fit
        :data:`CACHE_BUDGET` (per column, KT elements of R and one staged result)."""
        size, out_size = itemsize(d.dtype), itemsize(self.lw.decl(self.c.target.tensor).dtype)
        fit = FloorDiv(Const(CACHE_BUDGET // d.TN), d.KT * size + out_size)
        return Min(T.Const(d.TN) * CeilDiv(d.N, d.TN), T.Const(d.TN) * Max(Const(1), fit))

    def _blocked(
        self,
        r: Reduce,
        L: Read,
        R: Read,
        k: str,
        i_ax: str,
        j_ax: str,
        d: _Dims,
        hoist: bool = False,
    ):
        """The contraction blocked for reuse (the loop order of the documented matmul
        optimisations): a block of ``NB`` columns of the moving operand, all of K, stays in SBUF
        (as wide as :data:`CACHE_BUDGET` allows at the kernel's K together with the staged result
        block, loaded by one DMA per K tile) while every row block of the result streams past
        it; the result rows of a column block are staged in SBUF and stored by one DMA.

        A stationary operand stored ``[M, K]`` is transposed once, a block of ``MB`` rows at a
        time (all of M when it fits :data:`BLOCKS_BUDGET` beside the moving block), before the column blocks that
        use it, so large K costs neither a transpose per column block nor an SBUF overflow;
        stored ``[K, M]`` it is loaded per row block.

        ``for w < ceil(M / MB): build L^T[w-block]; for v < ceil(N / NB): load R[:, v-block];
        for t < ceil(mb / TM): for u < ceil(nb / TN): acc = sum_k L^T[k, t] @ R[k, u];
        stage[:, u] = epilogue(acc); store stage``.

        ``hoist`` (with ``L`` stored ``[M, K]``, for ``N`` within one column block): the single
        block of R is loaded once, before the loop over row blocks of L^T, not once per row
        block."""
        c, b, P, TM, TN, K, KT = self.c, self.b, d.P, d.TM, d.TN, d.K, d.KT
        size = itemsize(d.dtype)
        NB = self._column_block(d)
        cached = _needs_transpose(L, k, self.outer)
        hoist = hoist and cached
        outer = b.nested() if cached else b
        if cached:  # rows of L^T resident at once: KT elements per partition for each row
            rows = FloorDiv(Const(BLOCKS_BUDGET), KT * size) - Min(NB, d.N)
            MB = Min(
                T.Const(TM) * CeilDiv(d.M, TM), T.Const(TM) * Max(Const(1), FloorDiv(rows, TM))
            )
            w = outer.fresh("w")
            w0 = MB * T.Sym(w)
            m_ext = Min(MB, d.M - w0)
        else:
            w0, m_ext = Const(0), d.M
        v = None if hoist else outer.fresh("v")
        tm = outer.fresh("t")
        nb0 = Const(0) if hoist else NB * T.Sym(v)
        nb = Min(NB, d.N) if hoist else Min(NB, d.N - nb0)
        local = T.Const(TM) * T.Sym(tm)
        m0 = w0 + local if cached else local
        ms = Min(TM, m_ext - local)
        vblock = outer.nested()
        rblock = b.nested() if hoist else vblock  # R's block: before the row blocks, or per v
        rb = rblock.fresh(f"{R.tensor}_b")
        rblock.emit(Alloc(rb, (Const(P), KT, nb), d.dtype, Buffer.SBUF, loc=R.loc))
        kv = rblock.fresh("k")
        kb = rblock.nested()
        k0 = T.Const(P) * T.Sym(kv)
        ks = Min(P, K - k0)
        dst = View(rb, (Slice(0, ks), At(T.Sym(kv)), Slice(0, nb)))
        self._operand(kb, R, k, k0, ks, j_ax, nb0, nb, dst, d.dtype)
        rblock.emit(Loop(kv, 0, KT, body=tuple(kb.stmts), loc=R.loc))
        mblock = vblock.nested()
        pre: list = []
        if cached:
            st = self._cache_stationary(pre, outer, L, k, i_ax, d, w0, m_ext)
            st_m = Slice(local, ms)
        else:
            st, st_m = self._stationary(mblock, L, k, i_ax, m0, ms, d), Slice(0, ms)
        out = self.lw.decl(c.target.tensor)
        stage = mblock.fresh(f"{c.target.tensor}_t")
        mblock.emit(Alloc(stage, (ms, nb), out.dtype, Buffer.SBUF, loc=c.loc))
        un = mblock.fresh("u")
        ublock = mblock.nested()
        u0 = T.Const(TN) * T.Sym(un)
        ns = Min(TN, nb - u0)
        acc = ublock.fresh("acc")
        ublock.emit(Alloc(acc, (ms, ns), "float32", Buffer.PSUM, loc=c.loc))
        acc_v = T.whole(acc, ms, ns)
        for first in (True, False):
            kb2 = ublock.nested()
            kv2 = None if first else ublock.fresh("k")
            kk = Const(0) if first else T.Sym(kv2)
            ks2 = Min(P, K) if first else Min(P, K - T.Const(P) * kk)
            mv_v = View(rb, (Slice(0, ks2), At(kk), Slice(u0, ns)))
            st_v = View(st, (Slice(0, ks2), At(kk), st_m))
            kb2.emit(Matmul(acc_v, st_v, mv_v, accumulate=not first, loc=c.loc))
            if first:
                ublock.stmts.extend(kb2.stmts)
            else:
                ublock.emit(
                    Loop(kv2, 1, KT, kind=LoopKind.SEQUENTIAL, body=tuple(kb2.stmts), loc=c.loc)
                )
        staged = View(stage, (Slice(0, ms), Slice(u0, ns)))
        self._epilogue(ublock, r, acc_v, ms, ns, m0, nb0 + u0, i_ax, j_ax, stage=staged)
        mblock.emit(Loop(un, 0, CeilDiv(nb, TN), body=tuple(ublock.stmts), loc=c.loc))
        place = {i_ax: Slice(m0, ms), j_ax: Slice(nb0, nb)}
        mblock.emit(Store(self._target_view(place), T.whole(stage, ms, nb), loc=c.loc))
        vblock.emit(Loop(tm, 0, CeilDiv(m_ext, TM), body=tuple(mblock.stmts), loc=c.loc))
        if hoist:
            body = (*outer.stmts, *pre, *vblock.stmts)
            return [*rblock.stmts, Loop(w, 0, CeilDiv(d.M, MB), body=body, loc=c.loc)]
        vloop = Loop(v, 0, CeilDiv(d.N, NB), body=tuple(vblock.stmts), loc=c.loc)
        if not cached:
            return [vloop]
        body = (*outer.stmts, *pre, vloop)
        return [Loop(w, 0, CeilDiv(d.M, MB), body=body, loc=c.loc)]

    def _binding_env(self) -> dict:
        """Sizes at the binding's values: its scalars and its tensor shapes."""
        return F.binding_env(self.lw)

    def _cache_stationary(
        self, pre: list, b: T.Builder, L: Read, k: str, i_ax: str, d: _Dims, w0, wn
    ) -> str:
        """``L`` stored ``[M, K]`` is transposed per row block; inside the loop over column
        blocks of the moving operand that would redo every transpose once per column block, so
        the ``wn`` rows from ``w0`` are transposed once into a ``[128, KT, wn]`` tile before that
        loop (``wn`` is sized by :data:`BLOCKS_BUDGET`)."""
        name = b.fresh(f"{L.tensor}_T")
        pre.append(Alloc(name, (Const(d.P), d.KT, wn), d.dtype, Buffer.SBUF, loc=L.loc))
        tb = b.nested()
        tm = tb.fresh("t")
        local = T.Const(d.TM) * T.Sym(tm)
        ms = Min(d.TM, wn - local)
        body = tb.nested()
        self._stationary(body, L, k, i_ax, w0 + local, ms, d, into=(name, local))
        pre.append(Loop(tm, 0, CeilDiv(wn, d.TM), body=tuple(body.stmts), loc=L.loc))
        return name

    def _stationary(
        self, b: T.Builder, L: Read, k: str, i_ax: str, m0, ms, d: _Dims, into=None
    ) -> str:
        """``L``'s row block as the stationary operand ``[P, KT, ms]``: stored ``[M, K]``, the
        block's rows are loaded by one DMA and transposed 128 columns at a time.  ``into``:
        ``(tile, column)`` of a larger tile to fill instead of a fresh one."""
        P, K, KT = d.P, d.K, d.KT
        if into is None:
            st, c0 = b.fresh(f"{L.tensor}_T"), Const(0)
            b.emit(Alloc(st, (Const(P), KT, ms), d.dtype, Buffer.SBUF, loc=L.loc))
        else:
            st, c0 = into
        kv = b.fresh("k")
        k0 = T.Const(P) * T.Sym(kv)
        ks = Min(P, K - k0)
        kb = b.nested()
        st_k = View(st, (Slice(0, ks), At(T.Sym(kv)), Slice(c0, ms)))
        if not _needs_transpose(L, k, self.outer):
            self._operand(kb, L, k, k0, ks, i_ax, m0, ms, st_k, d.dtype)
            b.emit(Loop(kv, 0, KT, body=tuple(kb.stmts), loc=L.loc))
            return st
        rows = b.fresh(f"{L.tensor}_rows")
        b.emit(Alloc(rows, (ms, K), d.dtype, Buffer.SBUF, loc=L.loc))
        self._operand_rows(b, L, k, i_ax, m0, ms, K, T.whole(rows, ms, K))
        tp = kb.fresh(f"{L.tensor}_tp")
        kb.emit(Alloc(tp, (ks, ms), d.dtype, Buffer.PSUM, loc=L.loc))
        src = View(rows, (Slice(0, ms), Slice(k0, ks)))
        kb.emit(TensorTranspose(T.whole(tp, ks, ms), src, loc=L.loc))
        kb.emit(TensorCopy(st_k, T.whole(tp, ks, ms), loc=L.loc))
        b.emit(Loop(kv, 0, KT, body=tuple(kb.stmts), loc=L.loc))
        self.lw.ctx.note(
            "C2N2506",
            L.loc,
            tensor=L.tensor,
            how="tensor-engine transpose through PSUM, once per row block"
            + (" and column block" if into is None else ", before the column blocks"),
        )
        return st

    def _operand_rows(self, b: T.Builder, o: Read, k: str, ax: str, x0, xs, K, dst: View) -> None:
        all_names = sym_names(o.index) or ()
        sel = {k: Slice(0, K), ax: Slice(x0, xs)}
        dims = tuple(At(T.Sym(n)) if n in self.outer else sel[n] for n in all_names)
        b.emit(Load(dst, View(o.tensor, dims), loc=o.loc))

    def _target_view(self, place: dict) -> View:
        dims = tuple(
            At(ix) if not (isinstance(ix, T.Sym) and ix.name in place) else place[ix.name]
            for ix in self.c.target.index
        )
        return View(self.c.target.tensor, dims)

    def _cache_transposed(
        self, pre, R, k, K, KT, P, TN, TM, j_ax, N, dtype, share: int = 1
    ) -> str | None:
        """``R`` stored [N, K] must be transposed to [K, N] for the moving operand.  Transposing
        it per (row block, column block) would redo the same work for every 128-row block of
        the result, so, when ``KT x N`` elements per partition fit in a share of SBUF at the
        binding's sizes, transpose it once into a [128, KT, N] tile before the row-block loop.
        ``share``: how many products of the statement cache theirs beside it."""
        size = itemsize(dtype)
        # cached R^T + the stationary block beside it, for each product of the statement
        per_part = (KT * N + KT * TM) * size * share
        env = self._binding_env()
        try:
            need = int(per_part.evaluate(env))
        except Exception:  # sizes unknown without a binding
            need = None
        if need is None or need > CACHE_BUDGET:
            why = (
                "sizes unknown without a binding"
                if need is None
                else f"{need} bytes per partition, above the {CACHE_BUDGET} budget"
            )
            self.lw.ctx.note(
                "C2N2506",
                R.loc,
                tensor=R.tensor,
                how="tensor-engine transpose through PSUM, repeated for every row block of the "
                f"result: caching it transposed was not possible ({why})",
            )
            return None
        b = self.b.nested()
        name = b.fresh(f"{R.tensor}_T")
        b.emit(Alloc(name, (Const(P), KT, N), dtype, Buffer.SBUF, loc=R.loc))
        un = b.fresh("u")
        n0 = T.Const(TN) * T.Sym(un)
        ns = Min(TN, N - n0)
        ub = b.nested()
        self._wide_rows(ub, R, k, K, j_ax, (n0, ns), name, n0, dtype, once=need)
        b.emit(Loop(un, 0, CeilDiv(N, TN), body=tuple(ub.stmts), loc=R.loc))
        pre.extend(b.stmts)
        return name

    def _row_stage(self, b: T.Builder, ms, N) -> str | None:
        """A ``[ms, N]`` tile staging a row block of the result for one store, when the
        binding's ``N`` columns fit :data:`STAGE_BUDGET`; None otherwise."""
        out = self.lw.decl(self.c.target.tensor)
        try:
            need = int(N.evaluate(self._binding_env())) * itemsize(out.dtype)
        except Exception:  # sizes unknown without a binding
            return None
        if need > STAGE_BUDGET:
            return None
        name = b.fresh(f"{self.c.target.tensor}_rows")
        b.emit(Alloc(name, (ms, N), out.dtype, Buffer.SBUF, loc=self.c.loc))
        return name

    def _wide_rows(
        self, b, o: Read, k: str, K, ax, block, tile: str, col0, dtype: str, once=None
    ) -> None:
        """``tile[:, k tile, col0 : col0 + xs]`` = ``o``'s rows of ``block`` transposed, the
        rows loaded in wide DMAs (see _wide_rows)."""
        xs = block[1]

        def dst(kt, ks) -> View:
            return View(tile, (Slice(0, ks), At(kt), Slice(col0, xs)))

        transposed_rows(b, o, self.outer, (k, ax), K, block, dst, dtype)
        how = "tensor-engine transpose through PSUM, from rows loaded up to "
        how += f"{ROW_CHUNK} columns per DMA"
        if once is not None:
            how += (
                ", once per block before the row-block loop, kept in SBUF: "
                f"{once} bytes per partition at the binding's sizes"
            )
        self.lw.ctx.note("C2N2506", o.loc, tensor=o.tensor, how=how)

    def _split(self, ops: list[Read], k: str, i_ax, j_ax) -> tuple[Read, Read]:
        def has(o: Read, ax) -> bool:
            return ax is not None and ax in (sym_names(o.index) or ())

        a, b = ops
        if has(a, j_ax) or has(b, i_ax):
            a, b = b, a
        for o, ax in ((a, i_ax), (b, j_ax)):
            names = tuple(n for n in (sym_names(o.index) or ()) if n not in self.outer)
            want = {k, ax} - {None}
            if set(names) != want or len(names) != len(want):
                raise T.Unsupported(
                    f"the contraction operand access {o.tensor}{list(names)}", o.loc
                )
        return a, b

    def _operand(
        self,
        b: T.Builder,
        o: Read,
        k: str,
        k0,
        ks,
        ax,
        x0,
        xs,
        dst: View,
        dtype: str,
        once: int | None = None,
    ) -> None:
        """Fill ``dst`` ([ks, xs], contraction on partitions) from operand ``o``."""
        all_names = sym_names(o.index) or ()
        names = tuple(n for n in all_names if n not in self.outer)

        def view(sel: dict) -> View:
            return View(
                o.tensor, tuple(At(T.Sym(n)) if n in self.outer else sel[n] for n in all_names)
            )

        sel = {k: Slice(k0, ks)}
        if ax is not None:
            sel[ax] = Slice(x0, xs)
        if len(names) == 1 or names[0] == k:
            b.emit(Load(dst, view(sel), loc=o.loc))
            return
        raw = b.fresh(f"{o.tensor}_t")
        b.emit(Alloc(raw, (xs, ks), dtype, Buffer.SBUF, loc=o.loc))
        b.emit(Load(T.whole(raw, xs, ks), view(sel), loc=o.loc))
        tp = b.fresh(f"{o.tensor}_tp")
        b.emit(Alloc(tp, (ks, xs), dtype, Buffer.PSUM, loc=o.loc))
        b.emit(TensorTranspose(T.whole(tp, ks, xs), T.whole(raw, xs, ks), loc=o.loc))
        b.emit(TensorCopy(dst, T.whole(tp, ks, xs), loc=o.loc))
        how = "tensor-engine transpose through PSUM"
        if once is not None:
            how += (
                ", once per block before the row-block loop, kept in SBUF: "
                f"{once} bytes per partition at the binding's sizes"
            )
        self.lw.ctx.note("C2N2506", o.loc, tensor=o.tensor, how=how)
