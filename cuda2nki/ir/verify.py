"""Static checks of tile IR (both layers): ``verify(kernel) -> list[Diagnostic]``.

Run after every pass in tests.  Never raises on malformed IR: every problem is a diagnostic
(ids C2N2405-C2N2449, declared in :mod:`cuda2nki.rules.c2n2_ir`), located at the node if it has a
location, else at the nearest enclosing statement or the kernel.

Intent layer: undefined tensors/symbols, rank mismatches, unknown dtypes, axis-kind misuse (a
reduction axis used outside its reduction, scans along non-scan axes), non-combining reduction
ops, operator arity, writes to inputs, outputs never written, racy writes (a parallel axis missing
from the target index without ``accumulate``), data in shapes.

Scheduled layer: scoping of loop variables and tiles, DMA endpoints (HBM <-> SBUF, never from PSUM),
engine operands on chip, and the hardware limits of reference/NKI.md §3: partition dim <= 128,
PSUM tile <= 2 KiB per partition, matmul K <= 128 / stationary free <= 128 / moving free <= 512 with
a PSUM fp32 destination, tiles at least 2-D, reductions along free axes only, SBUF capacity.
Symbolic sizes are checked through an upper bound (``min(128, N - i*128)`` is at most 128); a size
with no known bound is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda2nki.diagnostics import UNKNOWN_LOC, Diagnostic, SourceLoc, make
from cuda2nki.ir import nodes as n
from cuda2nki.ir import uniform
from cuda2nki.ir.ops import (
    DTYPE_BYTES,
    INT_ARITH_OPS,
    AxisKind,
    Buffer,
    Op,
    Role,
    is_dtype,
    is_float,
)
from cuda2nki.ir.types import TypeEnv, dtype_of

PMAX = 128
PSUM_BYTES = 2048
MATMUL_K = 128
MATMUL_STATIONARY = 128
MATMUL_MOVING = 512
TRANSPOSE_MAX = 128
SBUF_BYTES = 212984  # usable bytes per partition on trn2 (reference/NKI.md §3.1)
MATMUL_DTYPES = {"float8_e4m3", "float8_e5m2", "bfloat16", "float16", "tfloat32", "float32"}


def verify(kernel: n.Kernel) -> list[Diagnostic]:
    """All findings for ``kernel`` (empty when it is well formed)."""
    v = _Verifier(kernel)
    try:
        v.run()
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # malformed beyond checking
        v.report("C2N2449", kernel.loc, reason=f"{type(exc).__name__}: {exc}")
    return v.diags


@dataclass
class _Scope:
    syms: dict[str, str] = field(
        default_factory=dict
    )  # name -> "scalar" | "axis" | "loop" | "reduce" | "carry:<dtype>"
    bounds: dict[str, int | None] = field(default_factory=dict)  # loop var -> max value
    tiles: dict[str, n.Alloc] = field(default_factory=dict)


class _Verifier:
    def __init__(self, kernel: n.Kernel) -> None:
        self.k = kernel
        self.diags: list[Diagnostic] = []
        self.tensors = kernel.tensors
        self.scalars = kernel.scalars
        self.types = TypeEnv(kernel)
        self.stmt_loc = kernel.loc
        self.reduce_names: set[str] = set()
        self.written: set[str] = set()
        self.sbuf_total = 0
        self.domain_axes: tuple[n.Axis, ...] = ()

    # ------------------------------------------------------------------ reporting
    def report(self, rule_id: str, loc: SourceLoc | None, /, **fmt: Any) -> None:
        if loc is None or loc == UNKNOWN_LOC:
            loc = self.stmt_loc if self.stmt_loc != UNKNOWN_LOC else self.k.loc
        d = make(rule_id, loc, **fmt)
        if d not in self.diags:
            self.diags.append(d)

    # ------------------------------------------------------------------ kernel
    def run(self) -> None:
        self.declarations()
        scope = _Scope(syms={s: "scalar" for s in self.scalars})
        for t in self.tensors.values():
            self.shape(t.shape, scope, t.loc, t.name)
        self.block(self.k.body, scope)
        for t in self.k.outputs:
            if t.role is Role.OUT and t.name not in self.written:
                self.report("C2N2420", t.loc, name=t.name)

    def declarations(self) -> None:
        seen: set[str] = set()
        for p in (*self.k.params, *self.k.temps):
            if p.name in seen:
                self.report("C2N2412", p.loc, name=p.name)
            seen.add(p.name)
            if not is_dtype(p.dtype):
                self.report("C2N2413", p.loc, dtype=p.dtype)
        for t in self.k.temps:
            if t.role is not Role.TEMP:
                self.report("C2N2423", t.loc, name=t.name, role=str(t.role))
        for p in self.k.params:
            if isinstance(p, n.TensorDecl) and p.role is Role.TEMP:
                self.report("C2N2423", p.loc, name=p.name, role="temp")

    def shape(self, shape: tuple, scope: _Scope, loc: SourceLoc, name: str) -> None:
        for s in shape:
            if _has_dyn(s):
                self.report("C2N2414", loc, name=name)
            self.size(s, scope, loc, allow_dyn=False)

    def block(self, stmts: tuple, scope: _Scope) -> None:
        for s in stmts:
            outer = self.stmt_loc
            if getattr(s, "loc", UNKNOWN_LOC) != UNKNOWN_LOC:
                self.stmt_loc = s.loc
            self.stmt(s, scope)
            self.stmt_loc = outer

    def stmt(self, s: Any, scope: _Scope) -> None:
        if isinstance(s, n.Compute):
            self.compute(s, scope)
        elif isinstance(s, n.Loop):
            self.loop(s, scope)
        elif isinstance(s, n.Alloc):
            self.alloc(s, scope)
        elif isinstance(s, (n.Load, n.Store)):
            self.dma(s, scope)
        elif isinstance(s, n.Note):
            if not (s.code.startswith("C2N") and s.code[3:].isdigit()):
                self.report("C2N2448", s.loc, value=s.code)
        else:
            self.engine(s, scope)

    # ------------------------------------------------------------------ intent
    def compute(self, c: n.Compute, scope: _Scope) -> None:
        inner = _Scope(dict(scope.syms), dict(scope.bounds), dict(scope.tiles))
        self.reduce_names = set(_reduce_axis_names(c.expr))
        self.domain_axes = c.domain.axes
        for a in c.domain.axes:  # an extent may use earlier axes (a triangular domain)
            self.size(a.extent, inner, a.loc)
            if a.kind is AxisKind.REDUCTION:
                self.report("C2N2415", a.loc, axis=a.name, kind=a.kind, where="in a domain")
            if a.name in inner.syms and inner.syms[a.name] != "scalar":
                self.report("C2N2412", a.loc, name=a.name)
            elif a.name in self.scalars:
                self.report("C2N2412", a.loc, name=a.name)
            inner.syms[a.name] = "axis"
        if c.domain.guard is not None:
            self.expr(c.domain.guard, inner)
        self.expr(c.expr, inner)
        self.target(c, inner)
        if c.accumulate is not None and not c.accumulate.info.combiner:
            self.report("C2N2408", c.loc, op=str(c.accumulate))

    def target(self, c: n.Compute, scope: _Scope) -> None:
        t = c.target
        decl = self.tensors.get(t.tensor)
        if decl is None:
            self.report("C2N2405", t.loc, name=t.tensor)
            return
        self.written.add(t.tensor)
        if decl.role is Role.IN:
            self.report("C2N2418", t.loc, name=t.tensor)
        if len(t.index) != decl.rank:
            self.report("C2N2406", t.loc, name=t.tensor, rank=decl.rank, got=len(t.index))
        used: set[str] = set()
        for s in t.index:
            self.size(s, scope, t.loc)
            used |= _syms_of(s)
        if c.accumulate is None:
            for a in c.domain.axes:
                if a.kind is AxisKind.PARALLEL and a.name not in used and not _is_one(a.extent):
                    self.report("C2N2422", c.loc, axis=a.name, name=t.tensor)

    def expr(self, e: n.Expr, scope: _Scope) -> None:
        if isinstance(e, n.Read):
            self.read(e, scope)
        elif isinstance(e, n.Lit):
            if not is_dtype(e.dtype):
                self.report("C2N2413", e.loc, dtype=e.dtype)
        elif isinstance(e, n.Param):
            if e.name not in scope.syms:
                self.undefined(e.name, e.loc)
        elif isinstance(e, n.IndexValue):
            self.size(e.expr, scope, e.loc)
            if not is_dtype(e.dtype):
                self.report("C2N2413", e.loc, dtype=e.dtype)
        elif isinstance(e, n.Unary):
            if e.op.arity != 1:
                self.report("C2N2417", e.loc, op=str(e.op), arity=e.op.arity, got=1)
            self.expr(e.x, scope)
            self.bitwise_on_float(e.op, (e.x,), e.loc)
        elif isinstance(e, n.Binary):
            if e.op.arity != 2:
                self.report("C2N2417", e.loc, op=str(e.op), arity=e.op.arity, got=2)
            self.expr(e.a, scope)
            self.expr(e.b, scope)
            self.bitwise_on_float(e.op, (e.a, e.b), e.loc)
        elif isinstance(e, n.Select):
            for x in (e.cond, e.a, e.b):
                self.expr(x, scope)
        elif isinstance(e, n.Cast | n.Bitcast):
            if not is_dtype(e.dtype):
                self.report("C2N2413", e.loc, dtype=e.dtype)
            self.expr(e.x, scope)
        elif isinstance(e, n.Reduce):
            self.reduce(e, scope)
        elif isinstance(e, n.Scan):
            self.scan(e, scope)
        elif isinstance(e, n.Iterate):
            self.iterate(e, scope)
        elif isinstance(e, n.Carry):
            if scope.syms.get(e.name) != f"carry:{e.dtype}":
                self.report("C2N2445", e.loc, what=f"carry({e.name}, {e.dtype}) outside its loop")
        else:
            self.report("C2N2449", self.stmt_loc, reason=f"unexpected {type(e).__name__}")

    def read(self, e: n.Read, scope: _Scope) -> None:
        decl = self.tensors.get(e.tensor)
        if decl is None:
            self.report("C2N2405", e.loc, name=e.tensor)
            return
        if decl.role is Role.TEMP and e.tensor not in self.written:
            self.report("C2N2424", e.loc, name=e.tensor)
        if len(e.index) != decl.rank:
            self.report("C2N2406", e.loc, name=e.tensor, rank=decl.rank, got=len(e.index))
        for s in e.index:
            self.size(s, scope, e.loc)

    def reduce(self, e: n.Reduce, scope: _Scope) -> None:
        if not e.op.info.combiner:
            self.report("C2N2408", e.loc, op=str(e.op))
        if e.acc_dtype is not None and not is_dtype(e.acc_dtype):
            self.report("C2N2413", e.loc, dtype=e.acc_dtype)
        if not e.axes:
            self.report("C2N2416", e.loc)
        inner = _Scope(dict(scope.syms), dict(scope.bounds), dict(scope.tiles))
        for a in e.axes:  # extents may use outer axes, not this reduction's own
            self.size(a.extent, scope, a.loc)
            if a.kind is not AxisKind.REDUCTION:
                self.report("C2N2415", a.loc, axis=a.name, kind=a.kind, where="in a reduction")
            if a.name in inner.syms:
                self.report("C2N2412", a.loc, name=a.name)
            inner.syms[a.name] = "reduce"
        self.expr(e.body, inner)
        if e.where is not None:
            self.expr(e.where, inner)

    def iterate(self, e: n.Iterate, scope: _Scope) -> None:
        """Carried variables: one dtype, initial value and update each, distinct names, the
        result one of them; ``trips`` a size free of data; ``carry`` only in update and cond."""
        k = len(e.names)
        if not k or {len(e.dtypes), len(e.init), len(e.update)} != {k}:
            self.report("C2N2445", e.loc, what="names, dtypes, initial values and updates differ")
            return
        if len(set(e.names)) != k or e.result not in e.names:
            self.report("C2N2445", e.loc, what=f"variables {list(e.names)}, result {e.result}")
        for dt in e.dtypes:
            if not is_dtype(dt):
                self.report("C2N2413", e.loc, dtype=dt)
        self.size(e.trips, scope, e.loc, allow_dyn=False)
        for x in (*e.init, *((e.enter,) if e.enter is not None else ())):
            self.expr(x, scope)
        inner = _Scope(dict(scope.syms), dict(scope.bounds), dict(scope.tiles))
        inner.syms.update((v, f"carry:{t}") for v, t in zip(e.names, e.dtypes))
        for x in (*e.update, e.cond):
            self.expr(x, inner)

    def scan(self, e: n.Scan, scope: _Scope) -> None:
        if not e.op.info.combiner:
            self.report("C2N2408", e.loc, op=str(e.op))
        if e.acc_dtype is not None and not is_dtype(e.acc_dtype):
            self.report("C2N2413", e.loc, dtype=e.acc_dtype)
        kinds = {a.name: a.kind for a in self.domain_axes}
        if kinds.get(e.axis) is not AxisKind.SCAN:
            self.report("C2N2409", e.loc, axis=e.axis)
        self.expr(e.body, scope)

    def bitwise_on_float(self, op: Op, xs: tuple, loc: SourceLoc) -> None:
        if op.info.kind != "bitwise":
            return
        for x in xs:
            try:
                dt = dtype_of(x, self.types)
            except TypeError:
                continue
            if is_float(dt):
                self.report("C2N2419", loc, op=str(op), dtype=dt)

    def undefined(self, name: str, loc: SourceLoc) -> None:
        if name in self.reduce_names:
            self.report("C2N2421", loc, name=name)
        else:
            self.report("C2N2411", loc, name=name)

    # ------------------------------------------------------------------ sizes
    def size(self, s: n.SizeExpr, scope: _Scope, loc: SourceLoc, allow_dyn: bool = True) -> None:
        if isinstance(s, n.Sym):
            if s.name not in scope.syms:
                self.undefined(s.name, loc)
            elif scope.syms[s.name] == "scalar":
                dt = self.scalars[s.name].dtype
                if is_float(dt):
                    self.report("C2N2419", loc, op="index", dtype=dt)
        elif isinstance(s, n.Dyn):
            if allow_dyn:
                self.expr(s.expr, scope)
        elif isinstance(s, n.Const):
            return
        else:
            self.size(s.a, scope, loc, allow_dyn)  # type: ignore[attr-defined]
            self.size(s.b, scope, loc, allow_dyn)  # type: ignore[attr-defined]

    def upper(self, s: n.SizeExpr, scope: _Scope) -> int | None:
        """An upper bound of ``s`` (None: unknown)."""
        if isinstance(s, n.Const):
            return s.value
        if isinstance(s, n.Sym):
            return scope.bounds.get(s.name)
        if isinstance(s, n.Min):
            ua, ub = self.upper(s.a, scope), self.upper(s.b, scope)
            return ub if ua is None else ua if ub is None else min(ua, ub)
        if isinstance(s, (n.Add, n.Mul, n.Max)):
            ua, ub = self.upper(s.a, scope), self.upper(s.b, scope)
            if ua is None or ub is None:
                return None
            if isinstance(s, n.Mul):
                return ua * ub if ua >= 0 and ub >= 0 else None
            return ua + ub if isinstance(s, n.Add) else max(ua, ub)
        if isinstance(s, n.Sub) and isinstance(s.b, n.Const):
            ua = self.upper(s.a, scope)
            return None if ua is None else ua - s.b.value
        if isinstance(s, (n.FloorDiv, n.CeilDiv)) and isinstance(s.b, n.Const) and s.b.value > 0:
            ua = self.upper(s.a, scope)
            return None if ua is None else -(-ua // s.b.value)
        return None

    # ------------------------------------------------------------------ scheduled
    def loop(self, s: n.Loop, scope: _Scope) -> None:
        self.size(s.start, scope, s.loc)
        self.size(s.stop, scope, s.loc)
        if s.step == 0:
            self.report("C2N2439", s.loc, var=s.var)
        if s.var in scope.syms:
            self.report("C2N2412", s.loc, name=s.var)
        if s.cond is not None and not uniform.is_uniform(s.cond, set(self.scalars)):
            self.report("C2N2446", s.loc, var=s.var, what=_text(s.cond))
        inner = _Scope(dict(scope.syms), dict(scope.bounds), dict(scope.tiles))
        inner.syms[s.var] = "loop"
        stop = self.upper(s.stop, scope)
        inner.bounds[s.var] = None if stop is None or s.step < 0 else stop - 1
        self.block(s.body, inner)

    def alloc(self, s: n.Alloc, scope: _Scope) -> None:
        if s.name in self.tensors or s.name in scope.tiles:
            self.report("C2N2412", s.loc, name=s.name)
        if not is_dtype(s.dtype):
            self.report("C2N2413", s.loc, dtype=s.dtype)
        self.shape(s.shape, scope, s.loc, s.name)
        scope.tiles[s.name] = s
        if len(s.shape) < 2:
            self.report("C2N2434", s.loc, name=s.name, rank=len(s.shape))
            return
        p = self.upper(s.shape[0], scope)
        if p is not None and p > PMAX:
            self.report("C2N2430", s.loc, name=s.name, size=p, limit=PMAX)
        free = 1
        for d in s.shape[1:]:
            u = self.upper(d, scope)
            free = None if (u is None or free is None) else free * u
        if free is None or not is_dtype(s.dtype):
            return
        nbytes = free * DTYPE_BYTES[s.dtype]
        if s.buffer is Buffer.PSUM and nbytes > PSUM_BYTES:
            self.report("C2N2431", s.loc, name=s.name, bytes=nbytes, limit=PSUM_BYTES)
        if s.buffer is Buffer.SBUF:
            self.sbuf_total += nbytes
            if self.sbuf_total > SBUF_BYTES:
                self.report("C2N2440", s.loc, name=s.name, bytes=self.sbuf_total, limit=SBUF_BYTES)

    def view(self, v: n.View, scope: _Scope, loc: SourceLoc) -> tuple[str, list[int | None]] | None:
        """(kind, upper bounds of the view's dims) with kind "hbm" | "sbuf" | "psum"; None if unknown."""
        if v.tensor in scope.tiles:
            a = scope.tiles[v.tensor]
            kind, full, dtype = str(a.buffer), a.shape, a.dtype
        elif v.tensor in self.tensors:
            t = self.tensors[v.tensor]
            kind, full, dtype = "hbm", t.shape, t.dtype
        else:
            self.report("C2N2405", loc, name=v.tensor)
            return None
        del dtype
        if not v.dims:
            return kind, [self.upper(s, scope) for s in full]
        flat = len(v.dims) == 1 and isinstance(v.dims[0], n.Rows)  # the tensor's elements
        if len(v.dims) != len(full) and not flat:
            self.report("C2N2406", loc, name=v.tensor, rank=len(full), got=len(v.dims))
            return None
        out: list[int | None] = []
        for d, ext in zip(v.dims, full):
            if isinstance(d, n.Slice):
                self.size(d.start, scope, loc)
                self.size(d.size, scope, loc)
                if d.step == 0:
                    self.report("C2N2439", loc, var=v.tensor)
                self.slice_bounds(v.tensor, d, ext, scope, loc)
                out.append(self.upper(d.size, scope))
            elif isinstance(d, n.At):
                self.size(d.index, scope, loc)
            elif isinstance(d, n.Indirect):
                iv = self.view(d.index, scope, loc)
                out.append(iv[1][0] if iv and iv[1] else None)
            elif isinstance(d, n.Rows):
                for x in (d.start, d.count, d.stride, d.width):
                    self.size(x, scope, loc)
                out += [self.upper(d.count, scope), self.upper(d.width, scope)]
        return kind, out

    def slice_bounds(self, name: str, d: n.Slice, ext: n.SizeExpr, scope: _Scope, loc) -> None:
        if not (isinstance(d.start, n.Const) and isinstance(ext, n.Const)):
            return
        size = self.upper(d.size, scope)
        if size is None or size <= 0:
            return
        last = d.start.value + (size - 1) * d.step
        if d.start.value < 0 or last >= ext.value or last < 0:
            self.report("C2N2438", loc, name=name, first=d.start.value, last=last, ext=ext.value)

    def dtype_of_view(self, v: n.View, scope: _Scope) -> str | None:
        if v.tensor in scope.tiles:
            return scope.tiles[v.tensor].dtype
        t = self.tensors.get(v.tensor)
        return t.dtype if t else None

    def dma(self, s: n.Load | n.Store, scope: _Scope) -> None:
        dst = self.view(s.dst, scope, s.loc)
        src = self.view(s.src, scope, s.loc)
        if isinstance(s, n.Load):
            if dst and dst[0] == "hbm":
                self.report("C2N2435", s.loc, what="load destination", need="an on-chip tile")
            if src and src[0] != "hbm":
                self.report("C2N2435", s.loc, what="load source", need="an HBM tensor")
        else:
            self.written.add(s.dst.tensor)
            if dst and dst[0] != "hbm":
                self.report("C2N2435", s.loc, what="store destination", need="an HBM tensor")
            elif s.dst.tensor in self.tensors and self.tensors[s.dst.tensor].role is Role.IN:
                self.report("C2N2418", s.loc, name=s.dst.tensor)
            if src and src[0] == "psum":
                self.report(
                    "C2N2435",
                    s.loc,
                    what="store source",
                    need="an SBUF tile (DMA cannot read PSUM)",
                )
            elif src and src[0] == "hbm":
                self.report("C2N2435", s.loc, what="store source", need="an SBUF tile")
            if s.accumulate is not None and s.accumulate is not Op.ADD:
                self.report(
                    "C2N2433", s.loc, what=f"DMA accumulation with '{s.accumulate}' (only add)"
                )
        for v, info in ((s.dst, dst), (s.src, src)):
            if info and info[0] != "hbm":
                self.partition_limit(v, info, s.loc)

    def partition_limit(self, v: n.View, info: tuple, loc: SourceLoc) -> None:
        dims = info[1]
        if dims and dims[0] is not None and dims[0] > PMAX:
            self.report("C2N2430", loc, name=v.tensor, size=dims[0], limit=PMAX)

    def engine(self, s: Any, scope: _Scope) -> None:
        views = list(_views_of(s))
        infos = {}
        for name, v in views:
            info = self.view(v, scope, s.loc)
            infos[name] = info
            if info is None:
                continue
            if info[0] == "hbm":
                self.report("C2N2436", s.loc, operand=name, name=v.tensor)
            else:
                self.partition_limit(v, info, s.loc)
        self.operand_shapes(s, scope)
        if isinstance(s, n.Matmul):
            self.matmul(s, scope, infos)
        elif isinstance(s, n.TensorReduce):
            if not s.axes or any(a <= 0 for a in s.axes):
                self.report("C2N2437", s.loc, axes=list(s.axes))
            if not s.op.info.combiner:
                self.report("C2N2408", s.loc, op=str(s.op))
        elif isinstance(s, n.TensorTranspose):
            src = infos.get("src")
            if src and any(x is not None and x > TRANSPOSE_MAX for x in src[1][:2]):
                self.report("C2N2441", s.loc, limit=TRANSPOSE_MAX)
        elif isinstance(s, n.Memset):
            dt = self.dtype_of_view(s.dst, scope)
            if dt and not is_float(dt) and isinstance(s.value.value, float):
                self.report(
                    "C2N2433",
                    s.loc,
                    what=f"memset of integer tile '{s.dst.tensor}' with a float value",
                )
        elif isinstance(s, n.TensorScan):
            if not s.op.info.combiner:
                self.report("C2N2408", s.loc, op=str(s.op))
        elif isinstance(s, n.IntArith):
            self.int_arith(s, scope)
        for op_field in ("op", "op0", "op1"):
            op = getattr(s, op_field, None)
            if isinstance(op, Op) and isinstance(s, (n.TensorTensor, n.TensorScalar)):
                if op_field == "op" and op.arity != 2:
                    self.report("C2N2417", s.loc, op=str(op), arity=op.arity, got=2)
        operands = ("bias", "scale", "operand0", "operand1", "initial", "on_true", "on_false")
        for opnd in (*operands, "a", "b") if isinstance(s, n.IntArith) else operands:
            val = getattr(s, opnd, None)
            if (
                isinstance(val, n.Param)
                and val.name not in self.scalars
                and scope.syms.get(val.name) != "loop"  # a loop variable's value
            ):
                self.report("C2N2411", s.loc, name=val.name)
        self.written.update(v.tensor for nm, v in views if nm == "dst")

    def int_arith(self, s: n.IntArith, scope: _Scope) -> None:
        """An exact integer op: an op it spells, an integer (comparison: float32) destination."""
        if s.op not in INT_ARITH_OPS:
            self.report("C2N2444", s.loc, what=f"operator '{s.op}'")
        dt = self.dtype_of_view(s.dst, scope)
        want = ("float32",) if s.op.info.kind == "compare" else ("int32", "uint32")
        if dt is not None and dt not in want:
            self.report("C2N2444", s.loc, what=f"a {dt} destination for '{s.op}'")
        if not any(isinstance(x, n.View) for x in (s.a, s.b)):
            self.report("C2N2444", s.loc, what="no tile operand")

    def dims_of(self, v: n.View, scope: _Scope) -> list[n.SizeExpr] | None:
        """The (symbolic) sizes of a view's dims; None if the tensor is unknown."""
        if v.tensor in scope.tiles:
            full: tuple = scope.tiles[v.tensor].shape
        elif v.tensor in self.tensors:
            full = self.tensors[v.tensor].shape
        else:
            return None
        if not v.dims:
            return list(full)
        out: list[n.SizeExpr] = []
        for d in v.dims:
            if isinstance(d, n.Slice):
                out.append(d.size)
            elif isinstance(d, n.Indirect):
                inner = self.dims_of(d.index, scope)
                if not inner:
                    return None
                out.append(inner[0])
            elif isinstance(d, n.Rows):
                out += [d.count, d.width]
        return out

    def operand_shapes(self, s: Any, scope: _Scope) -> None:
        """Per-partition operands are [P, 1]; elementwise operands span the same partitions."""
        for name in ("bias", "scale", "operand0", "operand1", "initial"):
            v = getattr(s, name, None)
            dims = self.dims_of(v, scope) if isinstance(v, n.View) else None
            if dims and len(dims) >= 1:
                free = [_exact(d) for d in dims[1:]]
                if None not in free and int(np.prod(free)) != 1:
                    self.report("C2N2442", s.loc, operand=name, size=int(np.prod(free)))
        if isinstance(s, (n.Matmul, n.TensorTranspose)):
            return  # these move data across partitions
        parts = []
        for name, v in _views_of(s):
            if name in ("bias", "scale", "operand0", "operand1", "initial", "reduce_dst"):
                continue
            dims = self.dims_of(v, scope)
            if dims:
                parts.append((name, dims[0]))
        for (na, a), (nb, b) in zip(parts, parts[1:]):
            ea, eb = _exact(a), _exact(b)
            if a != b and ea is not None and eb is not None and ea != eb:
                self.report("C2N2443", s.loc, a=na, pa=ea, b=nb, pb=eb)

    def matmul(self, s: n.Matmul, scope: _Scope, infos: dict) -> None:
        dst, st, mv = infos.get("dst"), infos.get("stationary"), infos.get("moving")
        if dst and dst[0] != "psum":
            self.report("C2N2432", s.loc, what="destination must be a PSUM tile")
        for nm, info in (("stationary", st), ("moving", mv)):
            if info and info[0] != "sbuf":
                self.report("C2N2432", s.loc, what=f"{nm} operand must be an SBUF tile")
        if st and st[1] and st[1][0] is not None and st[1][0] > MATMUL_K:
            self.report(
                "C2N2432", s.loc, what=f"contraction (partition) size {st[1][0]} > {MATMUL_K}"
            )
        if mv and mv[1] and mv[1][0] is not None and mv[1][0] > MATMUL_K:
            self.report(
                "C2N2432", s.loc, what=f"contraction (partition) size {mv[1][0]} > {MATMUL_K}"
            )
        if st and len(st[1]) > 1 and st[1][-1] is not None and st[1][-1] > MATMUL_STATIONARY:
            self.report(
                "C2N2432", s.loc, what=f"stationary free size {st[1][-1]} > {MATMUL_STATIONARY}"
            )
        if mv and len(mv[1]) > 1 and mv[1][-1] is not None and mv[1][-1] > MATMUL_MOVING:
            self.report("C2N2432", s.loc, what=f"moving free size {mv[1][-1]} > {MATMUL_MOVING}")
        dts = [self.dtype_of_view(v, scope) for v in (s.stationary, s.moving)]
        for dt in dts:
            if dt is not None and dt not in MATMUL_DTYPES:
                self.report("C2N2433", s.loc, what=f"matmul operand dtype {dt}")
        if None not in dts and ("float32" in dts or "tfloat32" in dts) and dts[0] != dts[1]:
            self.report("C2N2433", s.loc, what=f"matmul mixes {dts[0]} with {dts[1]}")
        ddt = self.dtype_of_view(s.dst, scope)
        if ddt is not None and ddt != "float32":
            self.report(
                "C2N2433", s.loc, what=f"matmul destination dtype {ddt} (PSUM accumulates float32)"
            )


# --------------------------------------------------------------------------- helpers


def _views_of(s: Any) -> Iterator[tuple[str, n.View]]:
    for name in ("dst", "src", "a", "b", "stationary", "moving", "pred", "reduce_dst"):
        v = getattr(s, name, None)
        if isinstance(v, n.View):
            yield name, v
    for name in ("bias", "scale", "operand0", "operand1", "initial", "on_true", "on_false"):
        v = getattr(s, name, None)
        if isinstance(v, n.View):
            yield name, v


def _reduce_axis_names(e: Any) -> Iterator[str]:
    if isinstance(e, n.Reduce):
        yield from (a.name for a in e.axes)
    if isinstance(e, (n.Expr, n.SizeExpr)):
        for f in getattr(e, "__dataclass_fields__", {}):
            yield from _reduce_axis_names(getattr(e, f))
    elif isinstance(e, tuple):
        for x in e:
            yield from _reduce_axis_names(x)
    elif isinstance(e, n.Axis):
        return


def _syms_of(s: n.SizeExpr) -> set[str]:
    return set(s.free_syms()) if not _has_dyn(s) else set(s.free_syms()) | _dyn_syms(s)


def _dyn_syms(s: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(s, n.Dyn):
        out |= _expr_syms(s.expr)
    elif isinstance(s, n.SizeExpr) and hasattr(s, "a"):
        out |= _dyn_syms(s.a) | _dyn_syms(s.b)  # type: ignore[attr-defined]
    return out


def _expr_syms(e: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(e, n.SizeExpr):
        return _syms_of(e)
    if isinstance(e, n.Param):
        return {e.name}
    if isinstance(e, (n.Expr, n.Axis)):
        for f in e.__dataclass_fields__:
            out |= _expr_syms(getattr(e, f))
    elif isinstance(e, tuple):
        for x in e:
            out |= _expr_syms(x)
    return out


def _has_dyn(s: Any) -> bool:
    if isinstance(s, n.Dyn):
        return True
    return hasattr(s, "a") and (_has_dyn(s.a) or _has_dyn(s.b))


def _exact(s: n.SizeExpr) -> int | None:
    """The value of a size with no free symbols (None otherwise)."""
    if _has_dyn(s) or s.free_syms():
        return None
    try:
        return int(s.evaluate({}))
    except (ZeroDivisionError, ValueError):
        return None


def _is_one(s: n.SizeExpr) -> bool:
    return isinstance(s, n.Const) and s.value <= 1


def _text(e: object) -> str:
    from cuda2nki.ir.printer import to_text  # the printer imports this module's callers

    return to_text(e, locs=False)
