"""Scheduled tile IR -> NKI source (current ``nki`` API and legacy ``neuronxcc.nki``).

The emitter walks the scheduled kernel, spells every operand (sizes, views, immediates) and asks
the target's instruction macros (``templates/<target>/ops.j2``) for the statement text; the module
template then places header, imports, signature and body.  Output is deterministic: names come
from the IR, loops and statements keep IR order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cuda2nki.codegen import render, spell
from cuda2nki.codegen.block_names import block_name, blocked_dim, has_matmul
from cuda2nki.diagnostics import SourceLoc
from cuda2nki.ir import uniform
from cuda2nki.ir.nodes import (
    Activation,
    Add,
    Alloc,
    At,
    BnAggr,
    BnStats,
    Const,
    Indirect,
    IntArith,
    Iota,
    Kernel,
    Lit,
    Load,
    Loop,
    Matmul,
    Memset,
    Min,
    Mul,
    Note,
    Param,
    Rows,
    ScalarDecl,
    SizeExpr,
    Slice,
    Store,
    Sub,
    Sym,
    TensorBitcast,
    TensorCopy,
    TensorDecl,
    TensorGather,
    TensorReduce,
    TensorScalar,
    TensorScan,
    TensorSelect,
    TensorTensor,
    TensorTranspose,
    View,
)
from cuda2nki.ir.ops import Op, Role
from cuda2nki.passes.fold_sizes import fold_size

INDENT = "    "


@dataclass(frozen=True)
class Signature:
    """The port's Python signature and prologue: tensors, keyword scalars, sizes from shapes."""

    tensors: tuple[str, ...]
    keywords: tuple[tuple[str, str | None], ...]  # (name, default spelling or None)
    sizes: tuple[tuple[str, str], ...]  # (size symbol, spelling from a shape)
    outputs: tuple[TensorDecl, ...]


def signature(kernel: Kernel, defaults: dict[str, object] | None = None) -> Signature:
    defaults = defaults or {}
    inputs = kernel.inputs
    sizes: dict[str, str] = {}
    for t in inputs:
        for d, ext in enumerate(t.shape):
            solved = _solve_size(ext, f"{spell.py_name(t.name)}.shape[{d}]")
            if solved is not None and solved[0] not in sizes:
                sizes[solved[0]] = solved[1]
    for t in inputs:  # products like R * C once one factor is known from another tensor
        for d, ext in enumerate(t.shape):
            if isinstance(ext, Mul) and isinstance(ext.a, Sym) and isinstance(ext.b, Sym):
                a, b = ext.a.name, ext.b.name
                shape = f"{spell.py_name(t.name)}.shape[{d}]"
                if a in sizes and b not in sizes:
                    sizes[b] = f"{shape} // {spell.py_name(a)}"
                elif b in sizes and a not in sizes:
                    sizes[a] = f"{shape} // {spell.py_name(b)}"
    used = _used_syms(kernel)
    keywords = []
    for p in kernel.params:
        if isinstance(p, ScalarDecl) and p.name not in sizes and p.name in used:
            dv = defaults.get(p.name)
            keywords.append((p.name, None if dv is None else repr(dv)))
    return Signature(
        tensors=tuple(t.name for t in inputs),
        keywords=tuple(keywords),
        sizes=tuple((k, v) for k, v in sizes.items() if k in used),
        outputs=kernel.outputs,
    )


def _solve_size(ext: SizeExpr, shape: str) -> tuple[str, str] | None:
    """``N`` -> (N, shape); ``2 * N`` -> (N, shape // 2); ``N + 2`` -> (N, shape - 2)."""
    if isinstance(ext, Sym):
        return ext.name, shape
    if isinstance(ext, Mul):
        for k, x in ((ext.a, ext.b), (ext.b, ext.a)):
            if isinstance(k, Const) and k.value > 0:
                wrapped = f"({shape})" if " " in shape else shape
                inner = _solve_size(x, f"{wrapped} // {k.value}")
                if inner is not None:
                    return inner
    if isinstance(ext, Add | Sub) and isinstance(ext.b, Const):
        delta = -ext.b.value if isinstance(ext, Add) else ext.b.value
        sign = "+" if delta >= 0 else "-"
        return _solve_size(ext.a, f"{shape} {sign} {abs(delta)}")
    return None


def _used_syms(kernel: Kernel) -> set[str]:
    """Scalar names (parameters, or sizes only tensor shapes name) the scheduled body or the
    output shapes refer to."""
    out: set[str] = set()
    scalars = set(kernel.scalars)
    for t in kernel.params:
        if isinstance(t, TensorDecl):
            scalars.update(s for d in t.shape for s in d.free_syms())

    def visit(x: object) -> None:
        if isinstance(x, SizeExpr):
            out.update(s for s in x.free_syms() if s in scalars)
        elif isinstance(x, Param):
            out.add(x.name)
        elif isinstance(x, (tuple, list)):
            for y in x:
                visit(y)
        elif hasattr(x, "__dataclass_fields__"):
            for f in x.__dataclass_fields__:
                if f != "loc":
                    visit(getattr(x, f))

    visit(kernel.body)
    for t in kernel.outputs:
        visit(t.shape)
    return out


@dataclass
class Emitter:
    kernel: Kernel
    target: str = "nki"
    source_name: str = "kernel.cu"
    lines: list[str] = field(default_factory=list)
    shapes: dict[str, tuple[SizeExpr, ...]] = field(default_factory=dict)
    buffers: dict[str, str] = field(default_factory=dict)
    last_line: int = -1
    temp_count: int = 0
    notes: dict[int, list[str]] = field(default_factory=dict)
    depth: int = 1
    bound: dict[SizeExpr, str] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    pending_dtype: str = ""
    pending_mask: str = ""
    name_sizes: bool = True
    call_bound: set[str] = field(default_factory=set)  # tiles an integer helper call produces

    # ------------------------------------------------------------------ helpers
    def put(self, depth: int, text: str) -> None:
        for ln in text.splitlines():
            self.lines.append(INDENT * depth + ln)

    def ins(self, depth: int, kind: str, **ops: object) -> None:
        args = render.arguments(self.target, kind)
        if "mask" in args:
            ops.setdefault("mask", "")
        if "dtype" in args and "dtype" not in ops:
            ops["dtype"] = self.pending_dtype or "nl.float32"
        self.pending_dtype = ""
        self.put(depth, render.instruction(self.target, kind, **ops))

    def origin(self, depth: int, loc: SourceLoc) -> None:
        if loc.line > 0 and loc.line != self.last_line:
            self.put(depth, f"# from {self.source_name}:{loc.line}")
            self.last_line = loc.line
            for text in self.notes.pop(loc.line, []):
                self.put(depth, f"# {text}")

    def size(self, e: SizeExpr) -> str:
        return spell.size(e, bound=self.bound)

    def view(self, v: View) -> str:
        name = spell.py_name(v.tensor)
        if not v.dims or self._whole(v):
            return name
        parts = []
        for d in v.dims:
            if isinstance(d, At):
                parts.append(self.size(d.index))
            elif isinstance(d, Slice):
                parts.append(self._slice(d))
            elif isinstance(d, Indirect):
                raise ValueError("indirect views are not emitted yet")
        return f"{name}[{', '.join(parts)}]"

    def _slice(self, d: Slice) -> str:
        start = self.size(d.start)
        if d.step == 1:
            stop = self.size(fold_size(d.start + d.size) if not _is_zero(d.start) else d.size)
            return (
                f"{start if not _is_zero(d.start) else ''}:{stop}"
                if not _is_zero(d.start)
                else f"0:{stop}"
            )
        stop = self.size(fold_size(d.start + (d.size - 1) * d.step + 1))
        return f"{start}:{stop}:{d.step}"

    def _whole(self, v: View) -> bool:
        shape = self.shapes.get(v.tensor)
        if shape is None or len(shape) != len(v.dims):
            return False
        return all(
            isinstance(d, Slice) and _is_zero(d.start) and d.step == 1 and d.size == s
            for d, s in zip(v.dims, shape)
        )

    def view_shape(self, v: View) -> tuple[SizeExpr, ...]:
        if not v.dims:
            return self.shapes.get(v.tensor, ())
        if isinstance(v.dims[0], Rows):
            return (v.dims[0].count, v.dims[0].width)
        return tuple(d.size for d in v.dims if isinstance(d, Slice))

    def hbm(self, hv: View, tile: View) -> str:
        """An HBM view shaped like ``tile``: reshape or partition broadcast where ranks differ."""
        if hv.dims and isinstance(hv.dims[0], Indirect):
            return self.indirect_ap(hv, tile)
        if hv.dims and isinstance(hv.dims[0], Rows):
            return self.rows_ap(hv.tensor, hv.dims[0])
        hshape, tshape = self.view_shape(hv), self.view_shape(tile)
        text = self.view(hv)
        if len(hshape) == len(tshape):
            return self.broadcast_ap(hv, tshape[0]) if _block_row(hshape, tshape) else text
        rows, cols = tshape if len(tshape) == 2 else (tshape[0], Const(1))
        size = hshape[0] if len(hshape) == 1 else None
        reshape = size is not None and (
            size == rows * cols
            or (cols == Const(1) and size == rows)
            or (rows == Const(1) and size == cols)
        )
        if reshape and size == rows * cols and self._strided_field(hv):
            return self.field_ap(hv, rows, cols)
        if reshape or (size is not None and size != cols):
            return f"{text}.reshape(({self.size(rows)}, {self.size(cols)}))"
        return self.broadcast_ap(hv, rows)

    @staticmethod
    def _strided_field(hv: View) -> bool:
        """One moving dim, not the last or strided, the others fixed: a field of records
        (``p[a:b, 0]``, ``q[a:b:3]``), whose elements are not contiguous (a reshape of it would
        not be a view)."""
        moving = [k for k, d in enumerate(hv.dims) if isinstance(d, Slice)]
        if len(moving) != 1 or not all(isinstance(d, Slice | At) for d in hv.dims):
            return False
        return moving[0] != len(hv.dims) - 1 or hv.dims[moving[0]].step > 1

    def field_ap(self, hv: View, rows: SizeExpr, cols: SizeExpr) -> str:
        """A field of consecutive records on a ``[rows, cols]`` tile: one access pattern whose
        element stride is the record's."""
        strides = self.strides(hv.tensor)
        offset, stride = [], "1"
        for d, sel in enumerate(hv.dims):
            start = sel.start if isinstance(sel, Slice) else sel.index
            if isinstance(sel, Slice):
                stride = strides[d] if sel.step == 1 else f"{sel.step} * {strides[d]}"
                stride = str(sel.step) if strides[d] == "1" and sel.step != 1 else stride
            if not _is_zero(start):
                term = self.size(start)
                offset.append(term if strides[d] == "1" else f"({term}) * {strides[d]}")
        c = self.size(cols)
        pattern = f"[[{c} * {stride}, {self.size(rows)}], [{stride}, {c}]]"
        off = " + ".join(offset) or "0"
        return f"{spell.py_name(hv.tensor)}.ap(pattern={pattern}, offset={off})"

    def rows_ap(self, tensor: str, d: Rows) -> str:
        """Overlapping rows of a 1-D tensor (a flat chunk with its halo): one access pattern."""
        pattern = f"[[{self.size(d.stride)}, {self.size(d.count)}], [1, {self.size(d.width)}]]"
        return f"{spell.py_name(tensor)}.ap(pattern={pattern}, offset={self.size(d.start)})"

    def strides(self, tensor: str) -> list[str]:
        name = spell.py_name(tensor)
        decl = self.kernel.tensors.get(tensor)
        if decl is None:  # the returned tensor of an inout parameter (``x_out``)
            decl = next(
                (d for n, d in self.kernel.tensors.items() if out_name(self.kernel, n) == tensor),
                None,
            )
        rank = len(decl.shape) if decl is not None else 1
        return [
            " * ".join(f"{name}.shape[{k}]" for k in range(d + 1, rank)) or "1" for d in range(rank)
        ]

    def indirect_ap(self, hv: View, tile: View) -> str:
        """Rows of ``hv`` chosen per partition by an index tile (a gather DMA)."""
        name = spell.py_name(hv.tensor)
        if hv.dims[0].flat:
            return f"{self.flat_column(hv.tensor)}.vector_select(0, {self.view(hv.dims[0].index)})"
        strides = self.strides(hv.tensor)
        rows = (self.view_shape(tile) or (Const(1),))[0]
        pattern = [f"[{strides[0]}, {self.size(rows)}]"]
        offset = []
        for d, sel in enumerate(hv.dims[1:], start=1):
            start = sel.index if isinstance(sel, At) else sel.start
            if not _is_zero(start):
                term = self.size(start)
                offset.append(term if strides[d] == "1" else f"({term}) * {strides[d]}")
            if isinstance(sel, Slice):
                step = strides[d] if sel.step == 1 else f"{sel.step} * {strides[d]}"
                pattern.append(f"[{step}, {self.size(sel.size)}]")
        if len(pattern) == 1:
            pattern.append("[1, 1]")
        return (
            f"{name}.ap(pattern=[{', '.join(pattern)}], offset={' + '.join(offset) or '0'}, "
            f"vector_offset={self.view(hv.dims[0].index)}, indirect_dim=0)"
        )

    def flat_column(self, tensor: str) -> str:
        """``tensor`` read as a column of its elements: a ``(size, 1)`` view whose row stride is
        one element, so a row index is a flat element offset (``.ap(vector_offset=...)`` would
        take the row stride from the tensor's own shape instead)."""
        name = spell.py_name(tensor)
        decl = self.kernel.tensors.get(tensor)
        if decl is None:  # the returned tensor of an inout parameter (``x_out``)
            decl = next(
                (d for n, d in self.kernel.tensors.items() if out_name(self.kernel, n) == tensor),
                None,
            )
        rank = len(decl.shape) if decl is not None else 1
        size = " * ".join(f"{name}.shape[{k}]" for k in range(rank))
        return f"{name}.reshape(({size}, 1))"

    def broadcast_ap(self, hv: View, rows: SizeExpr) -> str:
        """``hv`` (one moving dim or none) repeated on ``rows`` partitions: a stride-0 pattern."""
        name = spell.py_name(hv.tensor)
        decl = self.kernel.tensors.get(hv.tensor)
        rank = len(decl.shape) if decl is not None else len(hv.dims)
        strides = [
            " * ".join(f"{name}.shape[{k}]" for k in range(d + 1, rank)) or "1" for d in range(rank)
        ]
        offset, pattern = [], [f"[0, {self.size(rows)}]"]
        for d, sel in enumerate(hv.dims):
            start = sel.index if isinstance(sel, At) else sel.start
            if not _is_zero(start):
                term = self.size(start)
                offset.append(term if strides[d] == "1" else f"({term}) * {strides[d]}")
            if isinstance(sel, Slice):
                step = strides[d] if sel.step == 1 else f"{sel.step} * {strides[d]}"
                pattern.append(f"[{step}, {self.size(sel.size)}]")
        if len(pattern) == 1:
            pattern.append("[1, 1]")
        off = " + ".join(offset) or "0"
        return f"{name}.ap(pattern=[{', '.join(pattern)}], offset={off})"

    def operand(self, x: View | Lit | Param | None) -> str:
        if x is None:
            return "None"
        if isinstance(x, View):
            return self.view(x)
        return spell.immediate(x)

    # ------------------------------------------------------------------ statements
    def stmt(self, s: object, depth: int) -> None:
        self.depth = depth
        loc = getattr(s, "loc", None)
        if loc is not None and not isinstance(s, Note):
            self.origin(depth, loc)
        method = getattr(self, f"_{type(s).__name__}", None)
        if method is None:
            raise ValueError(f"no emitter for {type(s).__name__}")
        method(s, depth)

    def _Loop(self, s: Loop, depth: int) -> None:
        if s.cond is not None:  # decided when the kernel is traced
            cond = uniform.spell(s.cond, lambda p: self.size(Sym(p)), self.size)
            self.put(depth, f"if {cond}:")
            if uniform.is_branch(s) and s.var not in _body_syms(s.body):
                saved = self.last_line
                self.block(s.body, depth + 1)  # a branch, not a loop
                self.last_line = saved
                return
            depth += 1
            s = s.replace(cond=None)
        start, stop = self.size(s.start), self.size(s.stop)
        if s.var not in _body_syms(s.body):
            s = s.replace(var="_" + s.var)
        if self.target == "nki":
            head = (
                f"for {s.var} in range({stop}):"
                if _is_zero(s.start) and s.step == 1
                else (
                    f"for {s.var} in range({start}, {stop}{'' if s.step == 1 else f', {s.step}'}):"
                )
            )
            self.put(depth, head)
        else:
            self.ins(
                depth,
                "loop",
                var=s.var,
                start=start,
                stop=stop,
                step=s.step,
                loop_kind=s.kind.value,
            )
        saved = self.last_line
        if not s.body:
            self.put(depth + 1, "pass")
        named = self._name_sizes(s, depth + 1)
        self.block(s.body, depth + 1)
        self._drop_unused(named)
        self.last_line = saved

    def block(self, stmts: tuple, depth: int) -> None:
        """Emit a straight-line body (a loop's, or the kernel's)."""
        for x in stmts:
            self.stmt(x, depth)

    def _name_sizes(self, s: Loop, depth: int) -> list[tuple[SizeExpr, str, int]]:
        """Bind the ragged tile sizes of this loop (``min(128, R - 128 * t)``) to names."""
        if not self.name_sizes:
            return []
        found: list[SizeExpr] = []
        _collect_mins(s.body, s.var, found)
        named = []
        for n, e in enumerate(found):
            name = f"{s.var}_n" if n == 0 else f"{s.var}_n{n}"
            self.put(depth, f"{name} = {self.size(e)}")
            self.bound[e] = name
            named.append((e, name, len(self.lines) - 1))
        return named

    def _drop_unused(self, named: list[tuple[SizeExpr, str, int]]) -> None:
        for e, name, at in reversed(named):
            del self.bound[e]
            used = any(name in ln for ln in self.lines[at + 1 :])
            if not used:
                del self.lines[at]

    def _Alloc(self, s: Alloc, depth: int) -> None:
        self.dtypes[s.name] = s.dtype
        self.shapes[s.name] = s.shape
        self.buffers[s.name] = s.buffer.value
        if s.name in self.call_bound:
            return  # the helper call's result is bound to the name
        shape = (
            "("
            + ", ".join(self.size(d) for d in s.shape)
            + ("," if len(s.shape) == 1 else "")
            + ")"
        )
        self.ins(
            depth,
            "alloc",
            name=spell.py_name(s.name),
            shape=shape,
            dtype=spell.dtype(s.dtype),
            buffer=s.buffer.value,
        )

    def dst(self, v: View) -> str:
        """A destination operand: legacy assigns into it, so a whole tile becomes ``t[...]``."""
        self.pending_dtype = spell.dtype(self.dtypes[v.tensor]) if v.tensor in self.dtypes else ""
        text = self.view(v)
        if self.target == "legacy" and "[" not in text:
            return f"{text}[...]"
        return text

    def _Load(self, s: Load, depth: int) -> None:
        self.ins(depth, "load", dst=self.dst(s.dst), src=self.hbm(s.src, s.dst))

    def _Store(self, s: Store, depth: int) -> None:
        if s.accumulate is not None:
            raise ValueError("accumulating stores are not emitted yet")
        dst = s.dst.replace(tensor=out_name(self.kernel, s.dst.tensor))
        self.ins(depth, "store", dst=self.hbm(dst, s.src), src=self.view(s.src))

    def _Matmul(self, s: Matmul, depth: int) -> None:
        self.ins(
            depth,
            "matmul",
            dst=self.dst(s.dst),
            stationary=self.view(s.stationary),
            moving=self.view(s.moving),
            accumulate=_ACCUMULATE[self.target][bool(s.accumulate)],
        )

    def _TensorTranspose(self, s: TensorTranspose, depth: int) -> None:
        self.ins(depth, "transpose", dst=self.dst(s.dst), data=self.view(s.src))

    def _TensorCopy(self, s: TensorCopy, depth: int) -> None:
        self.ins(depth, "tensor_copy", dst=self.dst(s.dst), src=self.view(s.src))

    def _TensorBitcast(self, s: TensorBitcast, depth: int) -> None:
        if self.target != "nki":
            raise ValueError("a bit reinterpretation (a dtype view of a tile) is nki-only")
        dtype = spell.dtype(self.dtypes[s.dst.tensor])
        self.ins(depth, "bitcast", dst=self.dst(s.dst), src=self.view(s.src), dtype=dtype)

    def _TensorGather(self, s: TensorGather, depth: int) -> None:
        self.ins(
            depth,
            "n_gather",
            dst=self.dst(s.dst),
            data=self.view(s.data),
            indices=self.view(s.indices),
        )

    def _TensorTensor(self, s: TensorTensor, depth: int) -> None:
        if s.op == Op.DIV:
            raise ValueError("tensor-tensor division must be lowered to a reciprocal first")
        self.ins(
            depth,
            "tensor_tensor",
            dst=self.dst(s.dst),
            data1=self.view(s.a),
            data2=self.view(s.b),
            op=spell.op(s.op),
        )

    def _TensorScalar(self, s: TensorScalar, depth: int) -> None:
        op0, opd0 = self._scalar_op(s.op0, s.operand0, s.reverse0)
        if s.op1 is None:
            self.ins(
                depth,
                "tensor_scalar",
                dst=self.dst(s.dst),
                data=self.view(s.src),
                op0=op0,
                operand0=opd0,
                reverse0=str(s.reverse0),
            )
            return
        op1, opd1 = self._scalar_op(s.op1, s.operand1, s.reverse1)
        self.ins(
            depth,
            "tensor_scalar2",
            dst=self.dst(s.dst),
            data=self.view(s.src),
            op0=op0,
            operand0=opd0,
            op1=op1,
            operand1=opd1,
        )

    def _scalar_op(self, o: Op, operand, reverse: bool) -> tuple[str, str]:
        if o == Op.DIV and not reverse and not isinstance(operand, View):
            return "nl.multiply", f"1.0 / {self.operand(operand)}"
        if o == Op.DIV:
            raise ValueError("division by a tile must be lowered to a reciprocal first")
        return spell.op(o), self.operand(operand)

    def _TensorReduce(self, s: TensorReduce, depth: int) -> None:
        axis = str(s.axes[0]) if len(s.axes) == 1 else str(tuple(s.axes))
        self.ins(
            depth,
            "tensor_reduce",
            dst=self.dst(s.dst),
            op=spell.op(s.op),
            data=self.view(s.src),
            axis=axis,
        )

    def _Activation(self, s: Activation, depth: int) -> None:
        if s.op == Op.RECIPROCAL and s.bias is None and s.scale is None and s.reduce_dst is None:
            self.ins(depth, "reciprocal", dst=self.dst(s.dst), data=self.view(s.src))
            return
        scale = "1.0" if s.scale is None else self.operand(s.scale)
        if s.reduce_dst is not None:
            self.ins(
                depth,
                "activation_reduce",
                dst=self.dst(s.dst),
                op=spell.op(s.op),
                data=self.view(s.src),
                bias=self.operand(s.bias),
                scale=scale,
                reduce_op="nl.add",
                reduce_res=self.view(s.reduce_dst),
            )
            return
        self.ins(
            depth,
            "activation",
            dst=self.dst(s.dst),
            op=spell.op(s.op),
            data=self.view(s.src),
            bias=self.operand(s.bias),
            scale=scale,
        )

    def _Memset(self, s: Memset, depth: int) -> None:
        dtype = "float32" if s.value.dtype == "float64" else s.value.dtype
        self.memset(depth, s.dst, spell.immediate(s.value), dtype)

    def memset(self, depth: int, v: View, value: str, dtype: str) -> None:
        shape = "(" + ", ".join(self.size(d) for d in self.view_shape(v)) + ")"
        self.ins(
            depth, "memset", dst=self.dst(v), value=value, shape=shape, dtype=spell.dtype(dtype)
        )

    def _TensorSelect(self, s: TensorSelect, depth: int) -> None:
        # dst = on_false, then the predicated copy of on_true where pred holds (pred as uint8)
        shape = self.view_shape(s.dst)
        if isinstance(s.on_false, View):
            if s.on_false != s.dst:  # (a select in place keeps dst where pred is off)
                self.ins(depth, "tensor_copy", dst=self.dst(s.dst), src=self.view(s.on_false))
        else:
            self.memset(depth, s.dst, self.operand(s.on_false), "float32")
        pred = self.scratch(depth, "pred", shape, None, "uint8")
        self.ins(depth, "tensor_copy", dst=self.dst(pred), src=self.view(s.pred))
        if isinstance(s.on_true, View):
            src = self.view(s.on_true)
        else:
            src = self.view(self.scratch(depth, "val", shape, self.operand(s.on_true)))
        self.ins(depth, "select", dst=self.dst(s.dst), predicate=self.view(pred), src=src)

    def _TensorScan(self, s: TensorScan, depth: int) -> None:
        # r[i] = op(1 * r[i-1], x[i]): the scan instruction multiplies the carry by data0 = ones
        shape = self.view_shape(s.dst)
        ones = self.scratch(depth, "ones", shape, "1.0")
        self.ins(
            depth,
            "scan",
            dst=self.dst(s.dst),
            data0=self.view(ones),
            data1=self.view(s.src),
            initial=self.operand(s.initial),
            op0="nl.multiply",
            op1=spell.op(s.op),
        )

    def scratch(
        self, depth: int, base: str, shape: tuple, value: str | None, dtype: str = "float32"
    ) -> View:
        """A helper tile of ``shape`` (not part of the IR), filled with ``value`` if given."""
        name = self._fresh(base)
        dims = tuple(self.alloc_shape(shape))
        text = "(" + ", ".join(self.size(d) for d in dims) + ")"
        self.ins(depth, "alloc", name=name, shape=text, dtype=spell.dtype(dtype), buffer="sbuf")
        self.shapes[name] = tuple(shape)
        self.dtypes[name] = dtype
        view = View(name, tuple(Slice(0, d) for d in shape))
        if value is not None:
            self.memset(depth, view, value, dtype)
        return view

    def alloc_shape(self, shape: tuple) -> tuple:
        return shape

    def _BnStats(self, s: BnStats, depth: int) -> None:
        self.ins(depth, "bn_stats", dst=self.dst(s.dst), data=self.view(s.src))

    def _BnAggr(self, s: BnAggr, depth: int) -> None:
        self.ins(depth, "bn_aggr", dst=self.dst(s.dst), data=self.view(s.src))

    def _Iota(self, s: Iota, depth: int) -> None:
        def n(x: object) -> str:  # a count may be a problem size (a whole row)
            return str(x) if isinstance(x, int) else self.size(x)

        pattern = "[" + ", ".join(f"[{a}, {n(b)}]" for a, b in s.pattern) + "]"
        if self.target == "legacy":  # an affine expression of nl.arange grids
            rows = self.size(self.view_shape(s.dst)[0])
            (step, count), *_ = s.pattern
            grid_p, grid_f = f"nl.arange({rows})[:, None]", f"nl.arange({n(count)})[None, :]"
            pattern = f"{scaled(s.channel_multiplier, grid_p)} + {scaled(step, grid_f)}"
            if s.offset:
                pattern += f" + {s.offset}"
        self.ins(
            depth,
            "iota",
            dst=self.dst(s.dst),
            pattern=pattern,
            offset=str(s.offset),
            channel_multiplier=str(s.channel_multiplier),
        )

    def _IntArith(self, s: IntArith, depth: int) -> None:
        call = spell.int_call(
            s, self.operand(s.a), self.operand(s.b), self.dtypes.get(s.dst.tensor, "int32")
        )
        dst = self.call_dst(s.dst)
        self.pending_dtype, self.pending_mask = "", ""
        self.put(depth, render.instruction(self.target, "int_arith", dst=dst, call=call))

    def call_dst(self, v: View) -> str:
        """Where a helper call's result goes: the tile's name when the call makes the tile."""
        if v.tensor in self.call_bound:
            self.pending_dtype = ""
            return spell.py_name(v.tensor)
        return self.dst(v)

    def _Note(self, s: Note, depth: int) -> None:
        self.put(depth, f"# {s.code}: {s.text}")

    def _fresh(self, base: str) -> str:
        self.temp_count += 1
        return f"{base}_{self.temp_count}"


_ACCUMULATE = {"nki": {True: "True", False: "False"}, "legacy": {True: "+=", False: "="}}


def _body_syms(body: tuple) -> set[str]:
    from cuda2nki.passes.hoist_loads import names_read

    return names_read(body)


def _collect_mins(node: object, var: str, out: list) -> None:
    """``Min`` sizes that move with loop ``var`` (outermost ones, first-seen order)."""
    if isinstance(node, Min):
        if var in node.free_syms() and node not in out:
            out.append(node)
        return
    if isinstance(node, SizeExpr):
        return
    if isinstance(node, Loop):
        _collect_mins((node.start, node.stop), var, out)
        inner: list = []
        _collect_mins(node.body, var, inner)
        out.extend(m for m in inner if node.var not in m.free_syms() and m not in out)
        return
    if isinstance(node, tuple | list):
        for x in node:
            _collect_mins(x, var, out)
        return
    if hasattr(node, "__dataclass_fields__"):
        for f in node.__dataclass_fields__:
            if f != "loc":
                _collect_mins(getattr(node, f), var, out)


def _name_invariant_sizes(em: Emitter, kernel: Kernel) -> None:
    """Name the ``min(...)`` sizes that depend on the kernel's sizes only and recur (a tile width
    chosen from the problem size), once at the top of the kernel, inner ones first."""
    if not em.name_sizes:
        return
    scalars = set(kernel.scalars)
    counts: dict[SizeExpr, int] = {}
    _count_mins(kernel.body, scalars, counts)
    taken = {spell.py_name(x.name) for x in kernel.params} | set(kernel.tensors)
    taken |= _body_syms(kernel.body) | _tile_names(kernel.body)
    # short ones (``min(128, K)``) read better inline
    recurring = (e for e, n in counts.items() if n > 1 and _size_depth(e) >= 3)
    # a contraction's block sizes are named after the dimension they block (``N_block``)
    blocks = has_matmul(kernel.body)
    dims: dict[SizeExpr, str] = {}
    for e in sorted(recurring, key=_size_depth):
        dim = blocked_dim(e, scalars, dims) if blocks else None
        if dim is not None:
            dims[e] = dim
        name = block_name(dim, taken)
        taken.add(name)
        em.put(1, f"{name} = {em.size(e)}")
        em.bound[e] = name


def _tile_names(body: tuple) -> set[str]:
    from cuda2nki.rewrite import nodes

    return {spell.py_name(x.name) for x in nodes(body) if isinstance(x, Alloc)}


def _count_mins(node: object, scalars: set[str], counts: dict[SizeExpr, int]) -> None:
    if isinstance(node, SizeExpr):
        if isinstance(node, Min) and node.free_syms() <= scalars and node.free_syms():
            counts[node] = counts.get(node, 0) + 1
        for f in getattr(node, "__dataclass_fields__", ()):
            child = getattr(node, f)
            if isinstance(child, SizeExpr):
                _count_mins(child, scalars, counts)
        return
    if isinstance(node, tuple | list):
        for x in node:
            _count_mins(x, scalars, counts)
        return
    if hasattr(node, "__dataclass_fields__"):
        for f in node.__dataclass_fields__:
            if f != "loc":
                _count_mins(getattr(node, f), scalars, counts)


def _size_depth(e: SizeExpr) -> int:
    kids = [getattr(e, f) for f in getattr(e, "__dataclass_fields__", ())]
    return 1 + max((_size_depth(k) for k in kids if isinstance(k, SizeExpr)), default=0)


def _has_matmul(body: tuple) -> bool:
    for s in body:
        if isinstance(s, Matmul) or (isinstance(s, Loop) and _has_matmul(s.body)):
            return True
    return False


def uses_int_helpers(body: tuple) -> bool:
    """Whether the scheduled body has exact integer instructions (the port needs the helpers)."""
    return any(
        isinstance(s, IntArith) or (isinstance(s, Loop) and uses_int_helpers(s.body)) for s in body
    )


def call_bound_tiles(body: tuple) -> set[str]:
    """Tiles written only whole, by integer helper calls: the call's result becomes the tile."""
    shapes: dict[str, tuple] = {}
    by_call: set[str] = set()
    other: set[str] = set()

    def walk(stmts: tuple) -> None:
        for s in stmts:
            if isinstance(s, Alloc):
                shapes[s.name] = s.shape
            elif isinstance(s, Loop):
                walk(s.body)
            else:
                for f in ("dst", "reduce_dst"):
                    v = getattr(s, f, None)
                    if not isinstance(v, View):
                        continue
                    whole = tuple(d.size for d in v.dims if isinstance(d, Slice)) == shapes.get(
                        v.tensor
                    ) and all(isinstance(d, Slice) and _is_zero(d.start) for d in v.dims)
                    (by_call if isinstance(s, IntArith) and whole else other).add(v.tensor)

    walk(body)
    return by_call - other


def out_name(kernel: Kernel, name: str) -> str:
    """The returned tensor of parameter ``name`` (an inout gets ``_out``: inputs stay unmodified)."""
    decl = kernel.tensors.get(name)
    if decl is not None and decl.role == Role.INOUT:
        return name + "_out"
    return name


def _is_zero(e: SizeExpr) -> bool:
    return isinstance(e, Const) and e.value == 0


def emit_body(
    kernel: Kernel, target: str, source_name: str, sig: Signature, inline=()
) -> list[str]:
    if target == "legacy" and not _has_matmul(kernel.body):
        from cuda2nki.codegen.legacy import LegacyEmitter, partially_written, read_tiles

        em: Emitter = LegacyEmitter(kernel, target, source_name)
        em.partial = partially_written(kernel.body)
        em.read = read_tiles(kernel.body)
    else:
        # contractions keep exact-size (ragged) operand tiles in both APIs: a masked legacy load
        # leaves the tail of a K tile undefined, and the tensor engine would sum it
        em = Emitter(kernel, target, source_name)
    em.call_bound = call_bound_tiles(kernel.body)
    for d in inline:
        em.notes.setdefault(d.loc.line, []).append(f"{d.code}: {d.message}")
    for name, text in sig.sizes:
        em.put(1, f"{spell.py_name(name)} = {text}")
    for out in sig.outputs:
        out = out.replace(name=out_name(kernel, out.name))
        em.shapes[out.name] = out.shape
        shape = (
            "("
            + ", ".join(em.size(d) for d in out.shape)
            + ("," if len(out.shape) == 1 else "")
            + ")"
        )
        em.put(
            1,
            render.instruction(
                target,
                "output",
                name=spell.py_name(out.name),
                shape=shape,
                dtype=spell.dtype(out.dtype),
            ),
        )
    for t in kernel.inputs:
        em.shapes.setdefault(t.name, t.shape)
    _name_invariant_sizes(em, kernel)
    prologue = len(em.lines)
    em.block(kernel.body, 1)
    grid_lines = getattr(em, "grid_lines", [])
    em.lines[prologue:prologue] = [INDENT + ln for ln in grid_lines]
    outs = [spell.py_name(out_name(kernel, o.name)) for o in sig.outputs]
    em.put(1, render.instruction(target, "ret", values=", ".join(outs) if outs else "None"))
    return em.lines


__all__ = ["Emitter", "Signature", "emit_body", "signature", "Role"]


def scaled(coef: int, grid: str) -> str:
    """``coef * grid`` without a unit factor (a zero factor stays: it shapes the index grid)."""
    return grid if coef == 1 else f"{coef} * {grid}"


def _block_row(hshape: tuple, tshape: tuple) -> bool:
    """A 2-D block of HBM (``f[0:3, 0:3]``) read as one row of a ``[P, 9]`` tile on every
    partition: its elements number the tile's columns, its rows are not the tile's."""
    if len(tshape) != 2 or len(hshape) != 2 or hshape == tshape:
        return False
    n = hshape[0] * hshape[1]
    return fold_size(n) == fold_size(tshape[1]) and fold_size(hshape[0]) != fold_size(tshape[0])
