"""``lower-tiles`` for the ``flat`` layout: one domain walked in chunks of partitions x free
elements, its reads as rectangles or windows.
"""

from __future__ import annotations

from math import lcm
from typing import TYPE_CHECKING

from cuda2nki.ir.nodes import (
    At,
    CeilDiv,
    Compute,
    Const,
    Loop,
    Max,
    Min,
    Read,
    SizeExpr,
    Slice,
    Store,
    View,
)
from cuda2nki.passes import _tiles as T
from cuda2nki.passes import _window as W
from cuda2nki.passes._analysis import attrs
from cuda2nki.passes._index import ROW, SCALAR, access_class, flat_record_ok, plus
from cuda2nki.passes._lower_common import _cap, _guarded, _RowCompiler, _uses_index_value
from cuda2nki.passes._merged_rows import flat_chunk_rows
from cuda2nki.passes._periodic import (
    PERIOD_MAX,
    PeriodTables,
    chunk_width,
    period_of,
    periodic_tile,
    statement_period,
)

if TYPE_CHECKING:
    from cuda2nki.passes.lower_tiles import _Lowering

    _Base = _Lowering
else:
    _Base = object


class _FlatLowering(_Base):
    """The ``flat`` layout: methods mixed into the lowering (``lower_tiles._Lowering``)."""

    # ------------------------------------------------------------------ flat 1-D
    def lower_flat(self, group: list[Compute]) -> None:
        """Flat 1-D chunks; the statements of a group (they share an iteration) are computed in
        the same chunks, from one cache."""
        c = group[0]
        P = int(attrs(c).get("p_tile", "128"))
        F0 = int(attrs(c).get("f_tile", "512"))
        N = c.domain.axes[0].extent
        # Rows at most F0 wide, but a vector shorter than P * F0 is spread over the partitions
        # (an engine instruction costs the same on 1 or 128 of them): F = ceil(N / P) makes one
        # [N // F, F] tile of at most P rows plus a [1, N % F] tail (N = 3000: [125, 24]).
        # Index values need a constant row length (an iota's partition stride): F0 then.
        index = any(_uses_index_value(x) for x in group)
        F: SizeExpr = Const(F0) if index else Min(F0, Max(1, CeilDiv(N, P)))
        # periodic table reads (``g[k % C]``): rows a multiple of the period, so that every
        # chunk reads the table the same way (see _periodic)
        period = lcm(*(statement_period(x, x.domain.axes[0].name, self.kernel) for x in group))
        if period > PERIOD_MAX:  # rows of whole periods of every table would not fit
            why = (
                f"table reads whose periods have a common multiple of {period} (over {PERIOD_MAX})"
            )
            raise T.Unsupported(why, c.loc)
        if period > 1:
            F = Const(max(1, F0 // period) * period) if index else chunk_width(F0, N, P, period)
        chunk = P * F
        full = N // chunk
        rem = N % chunk
        parts = [
            (full, lambda v: chunk * T.Sym(v), Const(P), F),
            (Min(1, rem // F), lambda v: full * chunk, rem // F, F),
            (Min(1, N % F), lambda v: N - N % F, Const(1), N % F),
        ]
        # each table a [P, F] tile once, in front of the chunks: every chunk reads a corner
        tables = PeriodTables(self.b, Const(P), F)
        for stop, base_of, rows, cols in parts:
            v = self.b.fresh("t")
            base = base_of(v)
            inner = self.b.nested()
            cache: dict = {}
            for x in group:
                comp = self._flat_compiler(inner, rows, cols, x, base, period=period)
                comp.tables = tables
                comp.cache = cache
                val = comp.as_full(comp.compile(_guarded(x)))
                _, tdims = access_class(x.target.index, x.domain.axes[0].name, "")
                view = tuple(  # the chunk, or a field of its records (the record's stride)
                    Slice(plus(d.k * base if d.k != 1 else base, d.c), rows * cols, d.k)
                    if d.axis
                    else At(d.c)
                    for d in tdims
                )
                inner.emit(Store(View(x.target.tensor, view), val.operand, loc=x.loc))
            self.b.emit(Loop(v, 0, stop, body=tuple(inner.stmts), loc=c.loc))

    def _flat_compiler(
        self, b, rows, cols, c: Compute, base, axis: str = "", period: int = 1
    ) -> T.TileExprCompiler:
        """Reads of a flat chunk ``i = base + cols * p + f``; ``period``: the rows are a
        multiple of it long and start at a multiple of it (periodic table reads)."""
        i = axis or c.domain.axes[0].name

        def reader(rd: Read) -> T.Val:
            dt = self.decl(rd.tensor).dtype
            got = access_class(rd.index, i, "")
            table = period_of(rd, i, self.decl(rd.tensor).shape) if got is None else None
            if table is not None and period % table[0] == 0:  # g[i % C + c]: see _periodic
                if comp.tables is not None:
                    return comp.tables.corner(rd, table, rows, cols, dt)
                return periodic_tile(b, rd, table[0], table[1], rows, cols, dt)
            if got is None:  # a flat index taken apart along the tensor's dims: the flat chunk
                merged = flat_chunk_rows(rd.index, self.decl(rd.tensor).shape, i, base, rows, cols)
                if merged is not None:
                    return self._load(b, rd, (rows, cols), merged, T.FULL, dt)
                raise T.Unsupported(f"the access pattern of '{rd.tensor}'", rd.loc)
            cls, dims = got
            if cls == ROW and flat_record_ok(dims):  # the chunk, or a field of its records
                view = tuple(
                    Slice(plus(d.k * base if d.k != 1 else base, d.c), rows * cols, d.k)
                    if d.axis
                    else At(d.c)
                    for d in dims
                )
                return self._load(b, rd, (rows, cols), view, T.FULL, dt)
            if cls == SCALAR:
                shape = self.decl(rd.tensor).shape
                tap = W.hoisted_tap(b, comp.tap_loops, rd, rows, dt, shape)
                if tap is not None:
                    return tap
                view = tuple(At(d.c) for d in dims)
                return self._load(b, rd, (rows, Const(1)), view, T.ROW, dt)
            raise T.Unsupported(f"the access pattern of '{rd.tensor}'", rd.loc)

        comp = self.typed(
            _RowCompiler(b, rows, cols, reader, self.params, self.ctx.diagnostics, c.loc)
        )
        comp.window_read = self._window_reader(b, i, base, rows, cols, comp)
        comp.tables = None
        # i = base + cols * p + f on this [rows, cols] chunk
        kp = cols.value if isinstance(cols, Const) else (0 if rows == Const(1) else None)
        comp.index_map = {i: (kp, 1, base)}
        comp.full = (_cap(rows), _cap(cols))
        comp.loop_syms = frozenset(base.free_syms())
        return comp

    def _rect_reader(self, b, tile: dict, comp=None):
        """Zero-padded neighbour reads on a row tile (``i > 0 ? x[i - 1, j] : 0``): the tile
        filled with the pad value, the in-bounds rectangle fetched (see _window)."""
        tile = {ax: v for ax, v in tile.items() if ax}

        def read(e) -> T.Val | None:
            got = W.rect_bounds(e, tile)
            if got is None or len(got[1]) != 2 or self.is_temp(got[0].tensor):
                return None
            rd, dims, pad = got
            decl = self.decl(rd.tensor)
            loops = comp.tap_loops if comp is not None else []
            tap = W.halo_rect(b, loops, rd, dims, pad, tile, decl.shape, decl.dtype)
            if tap is not None:
                return tap
            return W.padded_rect(b, rd, dims, pad, tile, decl.shape, decl.dtype)

        return read

    def _window_reader(self, b, i: str, base, rows, cols, comp=None):
        """Shifted neighbour reads with a padded boundary on a flat chunk (see _window)."""

        def read(e) -> T.Val | None:
            got = W.window_bounds(e, i)
            if got is None:
                return None
            rd, shift, lo, hi, pad = got
            decl = self.decl(rd.tensor)
            if len(decl.shape) != 1 or self.is_temp(rd.tensor):
                return None
            size, dt = decl.shape[0], decl.dtype
            loops = comp.tap_loops if comp is not None else []
            tap = W.halo_tap(b, loops, rd, shift, lo, hi, pad, base, rows, cols, size, dt)
            if tap is not None:
                return tap
            return W.padded_read(b, rd, shift, lo, hi, pad, base, rows, cols, size, dt)

        return read
