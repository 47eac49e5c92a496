"""Legacy (``neuronxcc.nki``, beta 1) spelling of the scheduled IR: affine ``nl.arange`` index grids
and ``mask=`` predicates instead of ``min()``-bounded slices.

Every on-chip tile is allocated at its full (maximum) size; a ragged tail is the live region
``i_p < R - r0`` of the tile, expressed as a mask on the instruction that writes it.  HBM accesses
are index grids ``r0 + i_p``, ``c0 + i_f`` (affine in loop variables and ``nl.arange``), masked the
same way, so out-of-range rows and columns are never touched.  Tiles that feed the tensor engine
are zero-initialised so a masked tail contributes nothing to a contraction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cuda2nki.codegen import render, spell
from cuda2nki.codegen.emit import Emitter, _block_row, _is_zero, scaled
from cuda2nki.ir.nodes import (
    Alloc,
    At,
    Const,
    Indirect,
    Load,
    Loop,
    Matmul,
    Min,
    Rows,
    SizeExpr,
    Slice,
    TensorCopy,
    TensorTranspose,
    View,
)
from cuda2nki.rewrite import nodes

LAYOUT = ("[:, None]", "[None, :]")


def full_size(e: SizeExpr) -> SizeExpr:
    """The allocation size of a possibly ragged extent: ``min(128, R - r0)`` -> ``128``."""
    if isinstance(e, Min):
        for x in (e.a, e.b):
            if isinstance(x, Const):
                return x
    return e


def live_bound(e: SizeExpr) -> SizeExpr:
    """What a grid index must stay below: ``min(128, R - r0)`` -> ``R - r0``."""
    if isinstance(e, Min):
        return e.b if isinstance(e.a, Const) else e.a
    return e


@dataclass
class LegacyEmitter(Emitter):
    grids: dict[tuple[int, str], str] = field(default_factory=dict)
    grid_lines: list[str] = field(default_factory=list)
    live: dict[str, tuple[SizeExpr, ...]] = field(default_factory=dict)
    zeroed: set[str] = field(default_factory=set)
    loop_vars: set[str] = field(default_factory=set)
    inline: dict[tuple[int, str], tuple[str, int]] = field(default_factory=dict)
    inline_count: int = 0
    name_sizes: bool = False  # ragged sizes live in masks, not in names
    partial: set[str] = field(default_factory=set)  # tiles written in parts: allocated up front
    read: set[str] = field(default_factory=set)  # tiles some instruction reads
    bound_at: dict[str, int] = field(default_factory=dict)  # tile -> depth its name was bound at

    # ------------------------------------------------------------------ grids and masks
    def grid(self, pos: int, size: SizeExpr, depth: int) -> str:
        """The ``nl.arange`` grid of ``size`` for partition (pos 0) or free (pos 1) indexing.

        Loop-invariant grids are defined once at the top of the kernel; a grid whose size moves
        with a loop is defined inside that loop, under a name of its own."""
        text = self.size(size)
        key = (pos, text)
        if key in self.grids:
            return self.grids[key]
        if key in self.inline:
            return self.inline[key][0]
        base = "i_p" if pos == 0 else "i_f"

        def line_of(name: str) -> str:
            return render.instruction("legacy", "grid", name=name, size=text, layout=LAYOUT[pos])

        if size.free_syms() & self.loop_vars:
            self.inline_count += 1
            name = f"{base}_{self.inline_count}"
            self.put(depth, line_of(name))
            self.inline[key] = (name, depth)
            return name
        n = sum(1 for k in self.grids if k[0] == pos)
        name = base if n == 0 else f"{base}{n}"
        self.grids[key] = name
        self.grid_lines.append(line_of(name))
        return name

    def tile_dims(self, v: View) -> list[tuple[SizeExpr, SizeExpr, SizeExpr, int] | SizeExpr]:
        """Per dim of a tile view: (start, live size, full size, step) for a slice, or an index."""
        if not v.dims:
            shape = self.live.get(v.tensor, self.shapes.get(v.tensor, ()))
            return [(Const(0), s, full_size(s), 1) for s in shape]
        out: list = []
        for d in v.dims:
            if isinstance(d, At):
                out.append(d.index)
            else:
                out.append((d.start, d.size, full_size(d.size), d.step))
        return out

    def region(
        self, v: View, depth: int
    ) -> tuple[list[str], list[str], list[tuple[str, SizeExpr]]]:
        """Index expressions, mask terms and (grid, live size) per slice position of a tile view."""
        idx, mask, grids = [], [], []
        pos = 0
        for d in self.tile_dims(v):
            if not isinstance(d, tuple):
                idx.append(self.size(d))
                continue
            start, live, full, step = d
            g = self.grid(min(pos, 1), full, depth)
            pos += 1
            term = g if step == 1 else f"{step} * {g}"
            idx.append(term if _is_zero(start) else f"{self.size(start)} + {term}")
            if live != full:
                mask.append(f"({g} < {spell.size(live_bound(live))})")
            grids.append((g, live))
        return idx, mask, grids

    def view_at(self, v: View, depth: int) -> str:
        idx, _, _ = self.region(v, depth)
        return f"{spell.py_name(v.tensor)}[{', '.join(idx)}]"

    def mask_of(self, v: View, depth: int) -> str:
        _, mask, _ = self.region(v, depth)
        return f", mask={' & '.join(mask)}" if mask else ""

    def flat_name(self, tensor: str) -> str:
        """``tensor`` as the vector of its elements (a tensor of several dims reshaped)."""
        from cuda2nki.codegen.emit import out_name

        name = spell.py_name(tensor)
        decl = self.kernel.tensors.get(tensor) or next(
            (d for n, d in self.kernel.tensors.items() if out_name(self.kernel, n) == tensor), None
        )
        if decl is None or len(decl.shape) < 2:
            return name
        size = " * ".join(f"{name}.shape[{k}]" for k in range(len(decl.shape)))
        return f"{name}.reshape(({size},))"

    def hbm_at(self, hv: View, tile: View, depth: int) -> str:
        """The HBM side of a DMA as an index grid shaped like ``tile``."""
        _, _, grids = self.region(tile, depth)
        name = spell.py_name(hv.tensor)
        if hv.dims and isinstance(hv.dims[0], Indirect):
            return self.gather_at(hv, grids, depth)
        if hv.dims and isinstance(hv.dims[0], Rows):  # overlapping rows: a flat chunk's halo
            (gp, _), (gf, _) = grids[:2]
            d = hv.dims[0]
            start = "" if _is_zero(d.start) else f"{self.size(d.start)} + "
            flat = self.flat_name(hv.tensor)
            return f"{flat}[{start}{spell.size(d.stride, None, 2)} * {gp} + {gf}]"
        slices = [d for d in hv.dims if isinstance(d, Slice)]
        block = self.block_row_at(hv, tile, grids)
        if block is not None:
            return block
        if not hv.dims:
            return f"{name}[{', '.join(g for g, _ in grids)}]"
        if len(slices) == len(grids):
            it = iter(grids)
            parts = []
            for d in hv.dims:
                if isinstance(d, At):
                    parts.append(self.size(d.index))
                    continue
                g, _ = next(it)
                term = g if d.step == 1 else f"{d.step} * {g}"
                parts.append(term if _is_zero(d.start) else f"{self.size(d.start)} + {term}")
            return f"{name}[{', '.join(parts)}]"
        (gp, _), (gf, cols) = (grids + [("0", Const(1))])[:2]
        if not slices:  # one element repeated on every partition
            parts = [self.size(d.index) for d in hv.dims]
            last = "" if parts[-1] == "0" else f"{parts[-1]} + "
            parts[-1] = f"{last}0 * {gp}"  # the zero term gives the index its partition dim
            return f"{name}[{', '.join(parts)}]"
        sl = slices[0]
        start = "" if _is_zero(sl.start) else f"{self.size(sl.start)} + "
        step = "" if sl.step == 1 else f"{sl.step} * "
        size = sl.size
        tile_live = [live for _, live in grids]
        if len(tile_live) == 2 and size == tile_live[1] and tile_live[0] != Const(1):
            inner = f"{start}{step}{gf} + 0 * {gp}"  # broadcast over partitions
        elif len(tile_live) == 2 and tile_live[1] != Const(1):
            inner = f"{start}{step}({spell.size(cols, None, 2)} * {gp} + {gf})"  # row-major reshape
        else:
            inner = f"{start}{step}{gp}"
        parts = [inner if isinstance(d, Slice) else self.size(d.index) for d in hv.dims]
        return f"{name}[{', '.join(parts)}]"

    def block_row_at(self, hv: View, tile: View, grids: list) -> str | None:
        """A 2-D block of HBM read as one row of the tile on every partition (``f[0:3, 0:3]``
        as the 9 columns of a ``[P, 9]`` tile): ``f[i_f // 3, i_f % 3 + 0 * i_p]``."""
        if len(grids) != 2 or not _block_row(self.view_shape(hv), self.view_shape(tile)):
            return None
        (gp, _), (gf, _) = grids
        dims = hv.dims or tuple(Slice(Const(0), n) for n in self.view_shape(hv))
        if len(dims) != 2 or not all(isinstance(d, Slice) and d.step == 1 for d in dims):
            return None
        first, second = dims
        n = spell.size(second.size, None, 2)
        parts = []
        for d, g in ((first, f"{gf} // {n}"), (second, f"{gf} % {n} + 0 * {gp}")):
            parts.append(g if _is_zero(d.start) else f"{self.size(d.start)} + {g}")
        return f"{spell.py_name(hv.tensor)}[{', '.join(parts)}]"

    def alloc_shape(self, shape: tuple) -> tuple:
        return tuple(full_size(d) for d in shape)

    def scratch(
        self, depth: int, base: str, shape: tuple, value: str | None, dtype: str = "float32"
    ) -> View:
        name_hint = f"{base}_{self.temp_count + 1}"
        self.partial.add(name_hint)
        self.read.add(name_hint)
        self.live[name_hint] = tuple(shape)
        return super().scratch(depth, base, shape, value, dtype)

    def gather_at(self, hv: View, grids: list, depth: int) -> str:
        """``table[idx[i_p, 0], c0 + i_f]``: the index tile picks each partition's row."""
        gp = grids[0][0] if grids else "0"
        gf = grids[1][0] if len(grids) > 1 else None
        idx = self.view_at(hv.dims[0].index, depth).split("[")[0]
        if hv.dims[0].flat:  # an element offset into the tensor read as a column of elements
            name = spell.py_name(hv.tensor)
            decl = self.kernel.tensors.get(hv.tensor)
            rank = len(decl.shape) if decl is not None else 1
            size = " * ".join(f"{name}.shape[{k}]" for k in range(rank))
            return f"{name}.reshape(({size}, 1))[{idx}[{gp}, 0], {gf or 0}]"
        parts = [f"{idx}[{gp}, 0]"]
        for sel in hv.dims[1:]:
            if isinstance(sel, At):
                parts.append(self.size(sel.index))
                continue
            term = gf if sel.step == 1 else f"{sel.step} * {gf}"
            parts.append(term if _is_zero(sel.start) else f"{self.size(sel.start)} + {term}")
        return f"{spell.py_name(hv.tensor)}[{', '.join(parts)}]"

    # ------------------------------------------------------------------ statements
    def block(self, stmts: tuple, depth: int) -> None:
        """Emit a body and drop each tile name bound in it right after its last use.

        A Python name keeps its tile alive: without the ``del``, the tiles of one statement nest
        would still be held while the next nest allocates its own (the simulator, like the
        compiler, frees a tile when nothing refers to it any more)."""
        here = {x.name for x in stmts if isinstance(x, Alloc)}  # a name bound deeper stays
        last: dict[str, int] = {}
        for n, x in enumerate(stmts):
            for name in tiles_in(x) & here:
                last[name] = n
        if depth == 1 and stmts:  # the kernel's own body: returning frees what is left
            last = {t: at for t, at in last.items() if at != len(stmts) - 1}
        for n, x in enumerate(stmts):
            self.stmt(x, depth)
            dead = [t for t, at in last.items() if at == n and self.bound_at.get(t) == depth]
            if dead:
                for t in dead:
                    del self.bound_at[t]
                names = ", ".join(spell.py_name(t) for t in sorted(dead))
                self.put(depth, render.instruction(self.target, "free", names=names))

    def stmt(self, s: object, depth: int) -> None:
        if isinstance(s, Loop):
            self.loop_vars.add(s.var)
        super().stmt(s, depth)
        if isinstance(s, Loop):  # grids defined inside the loop body go out of scope
            self.inline = {k: v for k, v in self.inline.items() if v[1] <= depth}

    def _Alloc(self, s: Alloc, depth: int) -> None:
        self.dtypes[s.name] = s.dtype
        self.live[s.name] = s.shape
        self.shapes[s.name] = s.shape
        self.buffers[s.name] = s.buffer.value
        if s.name not in self.partial:
            return  # only ever produced whole: the instruction's result is bound to the name
        full = tuple(full_size(d) for d in s.shape)
        shape = "(" + ", ".join(self.size(d) for d in full) + ("," if len(full) == 1 else "") + ")"
        kind = "zeros" if s.name in self.zeroed else "alloc"
        self.bound_at[s.name] = depth
        self.ins(
            depth,
            kind,
            name=spell.py_name(s.name),
            shape=shape,
            dtype=spell.dtype(s.dtype),
            buffer=s.buffer.value,
        )

    def _Load(self, s: Load, depth: int) -> None:
        self.ins(
            depth,
            "load",
            dst=self.dst(s.dst),
            src=self.hbm_at(s.src, s.dst, depth),
            mask=self.mask_of(s.dst, depth),
        )

    def _Store(self, s, depth: int) -> None:
        from cuda2nki.codegen.emit import out_name

        dst = s.dst.replace(tensor=out_name(self.kernel, s.dst.tensor))
        self.ins(
            depth,
            "store",
            dst=self.hbm_at(dst, s.src, depth),
            src=self.view_at(s.src, depth),
            mask=self.mask_of(s.src, depth),
        )

    def _Matmul(self, s: Matmul, depth: int) -> None:
        op = "+=" if s.accumulate else "="
        self.ins(
            depth,
            "matmul",
            dst=self.view_at(s.dst, depth),
            stationary=self.view_at(s.stationary, depth),
            moving=self.view_at(s.moving, depth),
            accumulate=op,
            mask="",
        )

    def _TensorTranspose(self, s, depth: int) -> None:
        # unmasked: a mask box cannot describe both the source and the transposed destination;
        # padding lanes are garbage that masked copies and stores never move
        self.ins(depth, "transpose", dst=self.dst(s.dst), data=self.view_at(s.src, depth), mask="")

    def _BnStats(self, s, depth: int) -> None:
        # a ragged chunk: the statistics count only the live elements of the source
        dst = self.dst(s.dst)
        self.ins(depth, "bn_stats", dst=dst, data=self.view(s.src), mask=self.mask_of(s.src, depth))

    def _BnAggr(self, s, depth: int) -> None:
        # the live rows are the source's; the two moments per row need no grid of their own
        self.pending_dtype = spell.dtype(self.dtypes.get(s.dst.tensor, "float32"))
        dst = self._bind(s.dst, not s.dst.dims or self._whole(s.dst))
        self.ins(depth, "bn_aggr", dst=dst, data=self.view(s.src), mask=self.mask_of(s.src, depth))

    def _Iota(self, s, depth: int) -> None:
        """``offset + cm * p + step * f`` over the tile's index grids (legacy iota of an affine
        ``nl.arange`` expression)."""
        dims = [d for d in self.tile_dims(s.dst) if isinstance(d, tuple)]
        gp = self.grid(0, dims[0][2], depth)
        gf = self.grid(1, dims[1][2] if len(dims) > 1 else Const(1), depth)
        (step, _), *_ = s.pattern
        expr = f"{scaled(s.channel_multiplier, gp)} + {scaled(step, gf)}"
        if s.offset:
            expr += f" + {s.offset}"
        self.ins(
            depth,
            "iota",
            dst=self.dst(s.dst),
            pattern=expr,
            offset=str(s.offset),
            channel_multiplier=str(s.channel_multiplier),
        )

    def view(self, v: View) -> str:  # operands of compute instructions
        return self.view_at(v, self.depth)

    def dst(self, v: View) -> str:
        self.pending_dtype = spell.dtype(self.dtypes[v.tensor]) if v.tensor in self.dtypes else ""
        return self._dst(v)

    def call_dst(self, v: View) -> str:
        return self.dst(v)  # a whole tile's name is bound to the result anyway

    def _dst(self, v: View) -> str:
        # A masked instruction's result is assigned whole, so only a whole-tile destination may be
        # masked; a sub-region destination is written unmasked (its sources are zero-padded).
        # A strided sub-region (a field of a tile of records) is masked too: its full-size grid
        # would reach past the tile.
        whole = not v.dims or self._whole(v)
        stepped = any(isinstance(d, Slice) and d.step > 1 for d in v.dims)
        self.pending_mask = self.mask_of(v, self.depth) if whole or stepped else ""
        return self._bind(v, whole)

    def _bind(self, v: View, whole: bool) -> str:
        """The destination spelled: a whole tile's name (bound here), else an indexed view."""
        if whole and v.tensor not in self.partial:
            if v.tensor not in self.read:
                return "_"
            self.bound_at.setdefault(v.tensor, self.depth)
            return spell.py_name(v.tensor)
        return self.view_at(v, self.depth)

    def ins(self, depth: int, kind: str, **ops: object) -> None:
        args = render.arguments(self.target, kind)
        if "mask" in args and "mask" not in ops:
            ops["mask"] = getattr(self, "pending_mask", "")
        if "dtype" in args and "dtype" not in ops:
            # legacy results take the input dtype unless told: keep the IR tile's dtype (fp32 math)
            ops["dtype"] = self.pending_dtype or "nl.float32"
        self.pending_mask = ""
        self.pending_dtype = ""
        self.put(depth, render.instruction(self.target, kind, **ops))

    def hbm(self, hv: View, tile: View) -> str:
        return self.hbm_at(hv, tile, self.depth)

    def memset(self, depth: int, v: View, value: str, dtype: str) -> None:
        full = [d[2] for d in self.tile_dims(v) if isinstance(d, tuple)]
        shape = "(" + ", ".join(self.size(d) for d in full) + ")"
        self.ins(
            depth, "memset", dst=self.dst(v), value=value, shape=shape, dtype=spell.dtype(dtype)
        )


def zero_init_tiles(body: tuple) -> set[str]:
    """Tiles feeding the tensor engine (directly or through a copy): zero their padding."""
    out: set[str] = set()

    def walk(stmts) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                walk(s.body)
            elif isinstance(s, Matmul):
                out.update({s.stationary.tensor, s.moving.tensor})
            elif isinstance(s, TensorCopy):
                pass

    walk(body)
    feeds: list[tuple[str, str]] = []

    def edges(stmts) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                edges(s.body)
            elif isinstance(s, TensorCopy | TensorTranspose):
                feeds.append((s.dst.tensor, s.src.tensor))

    edges(body)
    changed = True
    while changed:
        changed = False
        for dst, src in feeds:
            if dst in out and src not in out:
                out.add(src)
                changed = True
    return out


def partially_written(body: tuple, shapes: dict | None = None) -> set[str]:
    """Tiles written through a sub-view or as a side result (reduce_res): they need an Alloc."""
    out: set[str] = set()
    allocs: dict[str, tuple] = {}

    def whole(v: View) -> bool:
        shape = allocs.get(v.tensor)
        return not v.dims or (
            shape is not None
            and len(shape) == len(v.dims)
            and all(
                isinstance(d, Slice) and _is_zero(d.start) and d.step == 1 and d.size == n
                for d, n in zip(v.dims, shape)
            )
        )

    def walk(stmts) -> None:
        for s in stmts:
            if isinstance(s, Alloc):
                allocs[s.name] = s.shape
            elif isinstance(s, Loop):
                walk(s.body)
            else:
                dst = getattr(s, "dst", None)
                if isinstance(dst, View) and dst.tensor in allocs and not whole(dst):
                    out.add(dst.tensor)
                red = getattr(s, "reduce_dst", None)
                if isinstance(red, View):
                    out.add(red.tensor)
                if type(s).__name__ == "TensorSelect":
                    out.add(dst.tensor)

    walk(body)
    return out


def read_tiles(body: tuple) -> set[str]:
    """Names of every tensor some statement reads (any View field other than ``dst``)."""
    out: set[str] = set()

    def visit(x, top: bool) -> None:
        if isinstance(x, View):
            out.add(x.tensor)
            for d in x.dims:
                visit(d, False)
        elif isinstance(x, tuple | list):
            for y in x:
                visit(y, False)
        elif hasattr(x, "__dataclass_fields__"):
            for f in x.__dataclass_fields__:
                if f in ("loc",) or (top and f in ("dst", "reduce_dst")):
                    continue
                visit(getattr(x, f), isinstance(x, Loop) and f == "body")

    def walk(stmts) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                walk(s.body)
            else:
                visit(s, True)

    walk(body)
    return out


def tiles_in(node: object) -> set[str]:
    """Every tensor name a statement (with its nested bodies) allocates or refers to."""
    out: set[str] = set()
    for x in nodes(node, skip=(SizeExpr,)):
        if isinstance(x, View):
            out.add(x.tensor)
        elif isinstance(x, Alloc):
            out.add(x.name)
    return out
