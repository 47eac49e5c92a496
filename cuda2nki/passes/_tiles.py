"""Shared machinery of the lowering passes: a statement builder and the tile-expression compiler.

Not a pass.  :class:`Builder` collects scheduled statements and hands out deterministic tile
names.  :class:`TileExprCompiler` turns an intent value expression, evaluated on one tile of a row
group (``rows`` partitions x ``cols`` free elements), into engine instructions and returns the
operand holding the result:

* ``FULL``  -- a ``[rows, cols]`` tile view (one element per domain point);
* ``ROW``   -- a ``[rows, 1]`` tile view (one value per partition, broadcast along the free dim);
* ``IMM``   -- an immediate (:class:`Lit` / :class:`Param`).

Reads are resolved through a ``reader`` callback so row groups, flat vectors and matmul epilogues
can each decide how a tensor access becomes a DMA.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from cuda2nki.diagnostics import DiagnosticError, SourceLoc, make
from cuda2nki.ir.nodes import (
    Activation,
    Alloc,
    Binary,
    Bitcast,
    Carry,
    Cast,
    Const,
    Expr,
    FloorDiv,
    IndexValue,
    Iota,
    Iterate,
    Lit,
    Loop,
    Memset,
    Mod,
    Param,
    Read,
    Reduce,
    Select,
    Slice,
    Sym,
    TensorCopy,
    TensorReduce,
    TensorScalar,
    TensorSelect,
    TensorTensor,
    Unary,
    View,
)
from cuda2nki.ir.nodes import Add as SAdd
from cuda2nki.ir.nodes import Mul as SMul
from cuda2nki.ir.nodes import Sub as SSub
from cuda2nki.ir.ops import Buffer, LoopKind, Op, is_float, is_narrow_int
from cuda2nki.ir.types import dtype_of
from cuda2nki.ir.verify import PMAX
from cuda2nki.passes._analysis import (
    FREE_AXIS,
    alpha_key,
    index_only,
    moves_along,
    rename_axis,
)
from cuda2nki.passes._bitcast import BitcastOps
from cuda2nki.passes._data_mask import data_mask_ok, masked_body
from cuda2nki.passes._identity import is_identity
from cuda2nki.passes._implied import drop_implied_where
from cuda2nki.passes._int_sums import IntSumOps
from cuda2nki.passes._ints import IntegerOps, wrap
from cuda2nki.passes._iterate import IterationOps
from cuda2nki.passes._narrowing import ROUNDING_OPS, NarrowingOps
from cuda2nki.passes._padded_select import zero_padded

FULL, ROW, IMM = "full", "row", "imm"

#: unary ops the scalar engine evaluates in one activation instruction
ACTIVATION_OPS = frozenset(
    {
        Op.EXP, Op.LOG, Op.SQRT, Op.RSQRT, Op.TANH, Op.SIGMOID, Op.RELU, Op.GELU, Op.GELU_TANH,
        Op.SILU, Op.ERF, Op.SQUARE, Op.ABS, Op.SIN, Op.COS, Op.ATAN, Op.SIGN, Op.COPY,
        Op.RECIPROCAL, Op.FLOOR, Op.CEIL, Op.TRUNC, Op.TAN,
    }
)  # fmt: skip
#: binary ops with a direct vector-engine ALU spelling
ALU_OPS = frozenset(
    {
        Op.ADD, Op.SUB, Op.MUL, Op.MAX, Op.MIN, Op.POW, Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE,
        Op.LAND, Op.LOR, Op.BITAND, Op.BITOR, Op.BITXOR, Op.SHL, Op.SHR, Op.DIV,
    }
)  # fmt: skip
REDUCE_OPS = frozenset({Op.ADD, Op.MAX, Op.MIN, Op.MUL, Op.BITAND, Op.BITOR, Op.BITXOR})
_FOLD = {
    Op.ADD: lambda a, b: a + b,
    Op.SUB: lambda a, b: a - b,
    Op.MUL: lambda a, b: a * b,
    Op.MAX: max,
    Op.MIN: min,
}
_FUSABLE = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.MAX, Op.MIN})
_SWAP = {Op.LT: Op.GT, Op.GT: Op.LT, Op.LE: Op.GE, Op.GE: Op.LE}


class Unsupported(Exception):
    """An intent construct this lowering cannot express; becomes C2N2501 naming ``construct``."""

    def __init__(self, construct: str, loc: SourceLoc | None = None):
        super().__init__(construct)
        self.construct = construct
        self.loc = loc


@dataclass(frozen=True)
class Val:
    kind: str  # FULL | ROW | IMM
    operand: View | Lit | Param
    dtype: str = "float32"
    #: bounds of an integer value (None: not known to be an integer; see passes/_ints.py)
    lo: int | None = None
    hi: int | None = None


@dataclass
class TapLoop:
    """A rolled reduction loop being compiled (``sum_j w[j] * x[i + j - 3]``): ``before`` holds
    what its steps share, emitted ahead of the loop (the window all the taps read, loaded once);
    ``tiles`` maps what was hoisted to its tile."""

    axis: str
    extent: object  # SizeExpr: the steps are 0, 1, ..., extent - 1
    before: list = field(default_factory=list)
    tiles: dict = field(default_factory=dict)


@dataclass
class Builder:
    """Collects statements; nested bodies are built with :meth:`nested`."""

    stmts: list = field(default_factory=list)
    used: dict[str, int] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)  # allocated tile -> its dtype

    def fresh(self, base: str) -> str:
        base = base.rstrip("_") or "t"
        n = self.used.get(base, 0)
        name = base if n == 0 else f"{base}{n}"
        while name in self.used and name != base:
            n += 1
            name = f"{base}{n}"
        self.used[base] = n + 1
        self.used.setdefault(name, 1)
        return name

    def emit(self, stmt: object) -> None:
        if isinstance(stmt, Alloc):
            self.dtypes[stmt.name] = stmt.dtype
        self.stmts.append(stmt)

    def nested(self) -> Builder:
        return Builder([], self.used, self.dtypes)


def whole(name: str, *sizes) -> View:
    return View(name, tuple(Slice(0, s) for s in sizes))


def row_dtype(dtype: str) -> str:
    """Intermediate dtype: keep float32 (engines compute in fp32); integers stay as they are."""
    return "float32" if is_float(dtype) or dtype == "bool" else dtype


@dataclass
class TileExprCompiler(IntegerOps, IntSumOps, IterationOps, NarrowingOps, BitcastOps):
    """Compile intent expressions on one ``rows x cols`` tile (see the module docstring)."""

    b: Builder
    rows: object  # SizeExpr: live partitions of this tile
    cols: object  # SizeExpr: live free elements of this tile
    reader: Callable[[Read], Val]
    params: dict[str, str]  # scalar parameter -> dtype
    diags: list
    loc: SourceLoc
    cache: dict = field(default_factory=dict)
    p_axis: str = ""
    f_axis: str = ""
    flat_guard: tuple | None = None
    #: where this tile sits in the domain, for index values (``index(j)`` of an axis) as tiles:
    #: axis -> (partition stride, free stride, offset), the allocation size of a partition and
    #: a free extent, and the loop variables an offset may use
    index_map: dict = field(default_factory=dict)
    full: tuple[int | None, int | None] = (None, None)
    loop_syms: frozenset = frozenset()
    #: a select the layout reads as one padded load (a shifted window), or None
    window_read: Callable[[Select], Val | None] | None = None
    #: the kernel's types (a TypeEnv; None: integer operations are not told apart) and the
    #: scalar parameters that size tensors or domains (below 2**24, like indices)
    types: object = None
    sizes: frozenset = frozenset()
    #: compiling a gather address: index arithmetic, left to the fp32 path (see _ints)
    addressing: bool = False
    #: compiling a branch of a select: its reads may be outside the tensor where the select
    #: picks the other branch (``i + 32 < n ? x[i + 32] : 0``), so they are loaded clipped
    masked: int = 0
    #: the state tiles of the iterations being compiled (``carry(v)``; see _iterate)
    carried: dict = field(default_factory=dict)
    #: the rolled reduction loops being compiled, innermost last (see :class:`TapLoop`)
    tap_loops: list = field(default_factory=list)

    # ------------------------------------------------------------------ allocation helpers
    def tile(self, base: str, kind: str, dtype: str) -> View:
        name = self.b.fresh(base)
        free = self.cols if kind == FULL else Const(1)
        self.b.emit(Alloc(name, (self.rows, free), dtype, Buffer.SBUF, loc=self.loc))
        return whole(name, self.rows, free)

    def materialize_row(self, v: Val, base: str = "s") -> Val:
        """An immediate as a ``[rows, 1]`` tile (for ops that need a tile operand)."""
        if v.kind != IMM:
            return v
        if self.is_wide(v):
            return self.as_int(v, v.dtype)
        dst = self.tile(base, ROW, "float32")
        if isinstance(v.operand, Lit):
            self.b.emit(Memset(dst, Lit(float(v.operand.value), "float32"), loc=self.loc))
        else:
            self.b.emit(Memset(dst, Lit(0.0, "float32"), loc=self.loc))
            self.b.emit(TensorScalar(dst, dst, Op.ADD, v.operand, loc=self.loc))
        return Val(ROW, dst)

    def as_full(self, v: Val, base: str = "b") -> Val:
        if v.kind == FULL:
            return v
        if self.is_wide(v):
            return self.int_full(v, v.dtype)
        dst = self.tile(base, FULL, "float32")
        v = self.materialize_row(v)
        self.b.emit(Memset(dst, Lit(0.0, "float32"), loc=self.loc))
        self.b.emit(TensorScalar(dst, dst, Op.ADD, v.operand, loc=self.loc))
        return Val(FULL, dst)

    # ------------------------------------------------------------------ expressions
    def compile(self, e: Expr) -> Val:
        key = self._cache_key(e)
        if key in self.cache:
            return self.cache[key]
        v = self._compile(e)
        if isinstance(e, (Lit, Param, IndexValue, Read)):
            v = self.leaf_bounds(e, v)
        self.cache[key] = v
        return v

    def _cache_key(self, e: Expr) -> object:
        """What a compiled value is cached under.  Along a free axis the axis's name does not
        matter, only its extent: an argmin's keys over ``j`` (compared with the minimum) and
        the same keys over ``l`` (the minimum's candidates) are one tile."""
        if self.f_axis and self.f_axis in moves_along(e):
            e = rename_axis(e, self.f_axis, FREE_AXIS)
            extent = ("free", self.rows, self.cols)
        else:
            extent = ()
        base = ("read", e.tensor, e.index) if isinstance(e, Read) else alpha_key(e)
        return (base, *extent) if extent else base

    def _compile(self, e: Expr) -> Val:
        if isinstance(e, Lit):
            return Val(IMM, Lit(float(e.value), "float32") if is_float(e.dtype) else e, e.dtype)
        if isinstance(e, Param):
            return Val(IMM, e, self.params.get(e.name, "float32"))
        if isinstance(e, IndexValue):
            if isinstance(e.expr, Sym) and e.expr.name in self.params:
                return Val(IMM, Param(e.expr.name, loc=e.loc), e.dtype)
            if isinstance(e.expr, Const):
                return Val(IMM, Lit(e.expr.value, e.dtype), e.dtype)
            ring = self.ring_value(e.expr, e.dtype, e.loc)
            if ring is not None:
                return self.compile(ring)
            value = self._size_value(e.expr, e.loc)
            if value is not None:
                return self.compile(value)
            tile = self._index_tile(e)
            if tile is None:
                split = self._divided_index(e)
                if split is not None:
                    return self.compile(split)
                raise Unsupported(f"an index used as a value ({type(e.expr).__name__})", e.loc)
            return tile
        if isinstance(e, Read):
            return self.reader(e)
        if isinstance(e, Cast):
            return self._cast(e)
        if isinstance(e, Bitcast):
            return self.bitcast(e)
        if isinstance(e, Unary):
            return self._unary(e)
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, Select):
            return self._select(e)
        if isinstance(e, Iterate):
            return self.iterate(e)
        if isinstance(e, Carry):
            return self.carry_value(e)
        if isinstance(e, Reduce):
            raise Unsupported("a reduction nested inside an elementwise expression", e.loc)
        raise Unsupported(f"expression {type(e).__name__}", getattr(e, "loc", None))

    def _divided_index(self, e: IndexValue) -> Expr | None:
        """An index with quotients or remainders by positive constants (``i % 2``,
        ``(i + 5) / 4 + 1``) as a value expression: each ``a % k`` / ``a // k`` of an ``a`` that is
        never negative (non-negative multiples of the tile's axes plus a non-negative constant)
        the integer ``%`` / ``/`` of ``index(a)`` -- C and the IR's flooring agree there -- and
        the sums, differences and constant multiples around them integer arithmetic."""
        got = self._index_value_expr(e.expr, e.dtype, e.loc)
        return None if got is None or isinstance(got, IndexValue) else got

    def _index_value_expr(self, x, dtype: str, loc) -> Expr | None:
        from cuda2nki.passes._index import linear

        if isinstance(x, Mod | FloorDiv):
            if not isinstance(x.b, Const) or x.b.value <= 0 or not self._never_negative(x.a):
                return None
            a = self._index_value_expr(x.a, dtype, loc)
            if a is None:
                return None
            op = Op.MOD if isinstance(x, Mod) else Op.DIV
            return Binary(op, a, Lit(x.b.value, dtype), loc=loc)
        if isinstance(x, SAdd | SSub | SMul):
            a = self._index_value_expr(x.a, dtype, loc)
            b = self._index_value_expr(x.b, dtype, loc)
            if a is None or b is None:
                return None
            op = Op.ADD if isinstance(x, SAdd) else Op.SUB if isinstance(x, SSub) else Op.MUL
            return Binary(op, a, b, loc=loc)
        if isinstance(x, Const):
            return Lit(x.value, dtype)
        if linear(x, frozenset(self.index_map or ())) is None:
            return None
        return IndexValue(x, dtype, loc=loc)  # linear, or a parameter: compiled as it is

    def _never_negative(self, x) -> bool:
        """``x`` is never negative: non-negative constants, the tile's axes, and sums,
        products, quotients and remainders (by positive constants) of such."""
        if isinstance(x, Const):
            return x.value >= 0
        if isinstance(x, Sym):
            return x.name in (self.index_map or {})
        if isinstance(x, SAdd | SMul):
            return self._never_negative(x.a) and self._never_negative(x.b)
        if isinstance(x, Mod | FloorDiv):
            return isinstance(x.b, Const) and x.b.value > 0 and self._never_negative(x.a)
        return False

    def _index_tile(self, e: IndexValue) -> Val | None:
        """``index(kp*p + kf*f + c)`` over the tile's axes: an iota tile plus the offset."""
        from cuda2nki.passes._index import _fold, linear

        lin = linear(e.expr, frozenset(self.index_map)) if self.index_map else None
        if lin is None:
            return None
        kp = kf = 0
        base = lin.get(None, Const(0))
        for axis, coef in lin.items():
            if axis is None:
                continue
            ap, af, off = self.index_map[axis]
            if not isinstance(coef, Const) or ap is None:
                return None
            kp, kf = kp + coef.value * ap, kf + coef.value * af
            base = _fold(base + _fold(coef * off))
        P, F = self.full[0], (self.full[1] if kf else 1)
        if P is None:  # rows of no constant bound (a flat remainder, rem // F): at most a tile
            P = PMAX
        if F is None and kf:
            F = self.cols  # a whole row of a problem size: the iota spans it
        offset = self._size_value(base, e.loc, loops=True)
        if offset is not None and kp == 0 and kf == 0:
            return self.compile(offset)  # an enclosing loop's variable: one value per tile
        if P is None or F is None or offset is None:
            return None
        name = self.b.fresh("iota")
        size = F if not isinstance(F, int) else Const(F)
        self.b.emit(Alloc(name, (Const(P), size), "int32", Buffer.SBUF, loc=e.loc))
        self.b.emit(Iota(whole(name, P, F), ((kf, F),), offset=0, channel_multiplier=kp, loc=e.loc))
        kind = FULL if kf else ROW
        tile = Val(kind, whole(name, self.rows, self.cols if kf else Const(1)), "int32")
        off = self.compile(offset)
        if off.kind == IMM and isinstance(off.operand, Lit) and off.operand.value == 0:
            return tile
        return self._tensor_scalar(Op.ADD, tile, off, reverse=False, loc=e.loc)

    def _size_value(self, e, loc, loops: bool = False) -> Expr | None:
        """A size expression over scalar parameters (and, with ``loops``, the enclosing loop
        variables) as a value expression (``V - 1``)."""
        if isinstance(e, Sym):
            ok = e.name in self.params or (loops and e.name in self.loop_syms)
            return Param(e.name, loc=loc) if ok else None
        if isinstance(e, Const):
            return Lit(float(e.value), "float32")
        kind = type(e).__name__
        if kind in ("FloorDiv", "Mod") and isinstance(e.b, Const) and e.b.value > 0:
            a = self._size_value(e.a, loc, loops)
            if a is None:
                return None
            # floor((a + 1/2) / k): exact for the integer sizes a fp32 holds (|a| < 2^22)
            k = float(e.b.value)
            half = Binary(Op.ADD, a, Lit(0.5, "float32"), loc=loc)
            q = Unary(Op.FLOOR, Binary(Op.MUL, half, Lit(1.0 / k, "float32"), loc=loc), loc=loc)
            if kind == "FloorDiv":
                return q
            return Binary(Op.SUB, a, Binary(Op.MUL, q, Lit(k, "float32"), loc=loc), loc=loc)
        op = {"Add": Op.ADD, "Sub": Op.SUB, "Mul": Op.MUL, "Min": Op.MIN, "Max": Op.MAX}.get(kind)
        if op is None:
            return None
        a, b = self._size_value(e.a, loc, loops), self._size_value(e.b, loc, loops)
        return None if a is None or b is None else Binary(op, a, b, loc=loc)

    def _padded_read(self, e: Select) -> Val | None:
        """``index(K*p + f + c) < n ? x[K*p + f + c] : v``: a row load padded with ``v``."""
        from cuda2nki.passes._index import flat_guard, flat_row

        if (
            not (self.p_axis and self.f_axis)
            or not isinstance(e.a, Read)
            or not isinstance(e.b, Lit)
        ):
            return None
        guard = flat_guard(e.cond, self.p_axis, self.f_axis)
        if guard is None or len(e.a.index) != 1:
            return None
        if flat_row(e.a.index[0], self.p_axis, self.f_axis) != guard[0]:
            return None
        saved, self.flat_guard = self.flat_guard, (*guard, float(e.b.value))
        try:
            return self.reader(e.a)
        finally:
            self.flat_guard = saved

    def _cast(self, e: Cast) -> Val:
        rint = self.rint_cast(e)
        if rint is not None:
            return rint
        v = self.compile(e.x)
        if e.dtype in ("int32", "uint32") and v.lo is not None and not self.addressing:
            if v.kind == IMM and isinstance(v.operand, Lit):
                value = wrap(int(v.operand.value), e.dtype)
                return Val(IMM, Lit(value, e.dtype), e.dtype, value, value)
            return self.int_cast(v, e.dtype)
        if v.kind == IMM and e.dtype in ("float16", "bfloat16") and isinstance(v.operand, Param):
            v = self.materialize_row(v)  # a scalar rounded to a narrow float: on a tile
        if v.kind == IMM:
            if isinstance(v.operand, Lit) and e.dtype in ("float16", "bfloat16"):
                import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)
                import numpy as np

                narrow = float(np.asarray(v.operand.value, e.dtype))
                return Val(IMM, Lit(narrow, "float32"), e.dtype)
            if isinstance(v.operand, Lit) and is_float(e.dtype):
                return Val(IMM, Lit(float(v.operand.value), "float32"), e.dtype)
            return Val(IMM, v.operand, e.dtype)
        if is_float(e.dtype) and e.dtype in ("float32", "float64") and is_float(v.dtype):
            # widening float casts are free (engines compute in fp32), once a half-precision
            # result computed in fp32 holds the value CUDA rounded to half (__hmul2 then
            # __half22float2: a product past 65504 is inf, not the exact fp32 product)
            return self._rounded_narrow(v, e)
        if not is_float(e.dtype) and e.dtype != "bool":
            v = self._to_narrow_int(v, e)
        dst = self.tile("cast", v.kind, "float32" if e.dtype == "float64" else e.dtype)
        self.b.emit(TensorCopy(dst, v.operand, loc=e.loc))
        return Val(v.kind, dst, e.dtype)

    def _rounded_narrow(self, v: Val, e: Cast) -> Val:
        """``v`` rounded to the narrow float type of ``e``'s operand where it was computed in
        fp32 (arithmetic in half or bfloat16); a read of a narrow tensor is exact already."""
        narrow = self.type_of(e.x)
        if narrow not in ("float16", "bfloat16") or isinstance(e.x, (Read, Cast)):
            return v
        if isinstance(v.operand, View) and self.b.dtypes.get(v.operand.tensor) == narrow:
            return v
        dst = self.tile("rounded", v.kind, narrow)
        self.b.emit(TensorCopy(dst, v.operand, loc=e.loc))
        return Val(v.kind, dst, e.dtype)

    def _to_narrow_int(self, v: Val, e: Cast) -> Val:
        """What a conversion to an integer type other than (u)int32 copies: a float truncated
        toward zero (the engines' float-to-int conversion rounds to nearest; out of range is
        undefined in C), an integer wrapped into the type as C wraps it (see _narrowing)."""
        if self._float_source(e.x):
            return self.float_to_int(v, e)
        if not is_narrow_int(e.dtype):
            return v  # (u)int32 with unknown bounds, 64-bit address arithmetic: as computed
        if v.lo is None and is_float(v.dtype):
            if self.is_truth(e.x):
                return v  # 0 or 1: inside every integer type
            raise Unsupported(f"a conversion to '{e.dtype}' of a value of unknown type", e.loc)
        return self.wrapped(v, e)

    def _float_source(self, x: Expr) -> bool:
        """Whether ``x`` is a float in the CUDA kernel, also inside a gather's address (where
        integer index arithmetic is computed in fp32 and :meth:`type_of` says nothing): a float
        converted to an index (``int a = pos[i] - 1; x[a]``) truncates toward zero there too,
        while the copy to the indirect DMA's int32 offsets rounds to nearest."""
        if self.types is None:
            return False
        try:
            return is_float(dtype_of(x, self.types))
        except TypeError:
            return False

    def _unary(self, e: Unary) -> Val:
        x = e.x
        dt = self.type_of(e)
        if dt in ("int32", "uint32") and e.op in (Op.NEG, Op.BITNOT):
            zero, ones = Lit(0, dt), Lit(-1 if dt == "int32" else 2**32 - 1, dt)
            if e.op == Op.NEG:
                return self._binary(Binary(Op.SUB, zero, x, loc=e.loc))
            return self._binary(Binary(Op.BITXOR, x, ones, loc=e.loc))
        if e.op == Op.NEG:
            return self._binary(Binary(Op.MUL, x, Lit(-1.0, "float32"), loc=e.loc))
        if e.op == Op.LNOT:  # C's !x is x == 0 (false for NaN, as in C)
            zero = (
                Lit(0, "int32") if self.type_of(x) in ("int32", "uint32") else Lit(0.0, "float32")
            )
            return self._binary(Binary(Op.EQ, x, zero, loc=e.loc))
        if e.op in ROUNDING_OPS:
            return self.rounded(e)
        if e.op not in ACTIVATION_OPS:
            raise Unsupported(f"math function '{e.op.value}'", e.loc)
        scale: Lit | Param | View | None = None
        bias: Lit | Param | View | None = None
        # fuse x*s + b into the activation's affine pre-op where the shapes allow
        if isinstance(x, Binary) and x.op in (Op.ADD, Op.SUB) and e.op != Op.RECIPROCAL:
            inner, other = self.compile(x.a), self.compile(x.b)
            if inner.kind == FULL and other.kind in (ROW, IMM):
                bias = self._negated(other) if x.op == Op.SUB else other
                src = inner
            else:
                src = self.compile(x)
        else:
            src = self.compile(x)
        if src.kind == IMM:
            src = self.materialize_row(src)
        if bias is not None and isinstance(bias.operand, (Lit, Param)):
            bias = self.materialize_row(bias, "bias")
        dst = self.tile(e.op.value, src.kind, "float32")
        self.b.emit(
            Activation(
                dst,
                e.op,
                src.operand,
                bias=bias.operand if bias is not None else None,
                scale=scale,
                loc=e.loc,
            )
        )
        return Val(src.kind, dst)

    def _negated(self, v: Val) -> Val:
        if v.kind == IMM and isinstance(v.operand, Lit):
            return Val(IMM, Lit(-float(v.operand.value), "float32"))
        v = self.materialize_row(v)
        dst = self.tile("neg", ROW, "float32")
        self.b.emit(TensorScalar(dst, v.operand, Op.MUL, Lit(-1.0, "float32"), loc=self.loc))
        return Val(ROW, dst)

    def _binary(self, e: Binary) -> Val:
        dtype = self.int_type(e)
        if dtype is None:
            return self._fp32_binary(e)
        v, bounds = self.int_binary(e, dtype)
        if v is not None:
            return v
        v = self._fp32_binary(e)
        if bounds is None:
            return v
        return dataclasses.replace(v, lo=bounds[0], hi=bounds[1])

    def _fp32_binary(self, e: Binary) -> Val:
        if e.op not in ALU_OPS:
            raise Unsupported(f"operator '{e.op.value}'", e.loc)
        if e.op == Op.MUL and e.a == e.b:
            return self._unary(Unary(Op.SQUARE, e.a, loc=e.loc))
        fused = self._fused_scalar_pair(e)
        if fused is not None:
            return fused
        a, b = self.compile(e.a), self.compile(e.b)
        if e.op == Op.DIV:
            return self._divide(a, b, e)
        if a.kind == IMM and b.kind == IMM:
            return self._scalar_pair(e.op, a, b, e)
        if a.kind == IMM or (a.kind == ROW and b.kind == FULL):
            return self._tensor_scalar(e.op, b, a, reverse=True, loc=e.loc)
        if b.kind == IMM or (b.kind == ROW and a.kind == FULL):
            return self._tensor_scalar(e.op, a, b, reverse=False, loc=e.loc)
        kind = FULL if FULL in (a.kind, b.kind) else ROW
        dst = self.tile(e.op.value, kind, "float32")
        self.b.emit(TensorTensor(dst, e.op, a.operand, b.operand, loc=e.loc))
        return Val(kind, dst)

    def _fused_scalar_pair(self, e: Binary) -> Val | None:
        """``(x op0 s0) op1 s1`` with per-row/immediate ``s0``, ``s1``: one tensor_scalar."""
        inner = e.a
        if e.op not in _FUSABLE or not isinstance(inner, Binary) or inner.op not in _FUSABLE:
            return None
        if inner in self.cache:
            return None  # already computed: reuse it instead of recomputing
        x, s0, s1 = self.compile(inner.a), self.compile(inner.b), self.compile(e.b)
        if x.kind != FULL or s0.kind == FULL or s1.kind == FULL:
            return None
        dst = self.tile(e.op.value, FULL, "float32")
        self.b.emit(
            TensorScalar(
                dst, x.operand, inner.op, s0.operand, op1=e.op, operand1=s1.operand, loc=e.loc
            )
        )
        return Val(FULL, dst)

    def _scalar_pair(self, op: Op, a: Val, b: Val, e: Binary) -> Val:
        if isinstance(a.operand, Lit) and isinstance(b.operand, Lit) and op in _FOLD:
            return Val(IMM, Lit(float(_FOLD[op](a.operand.value, b.operand.value)), "float32"))
        return self._tensor_scalar(op, self.materialize_row(a), b, reverse=False, loc=e.loc)

    def _tensor_scalar(self, op: Op, data: Val, operand: Val, reverse: bool, loc) -> Val:
        if reverse and op in _SWAP:
            op, reverse = _SWAP[op], False
        unit = operand.operand
        if isinstance(unit, Lit) and data.dtype == "float32":
            if is_identity(op, unit.value, on_left=reverse):
                return Val(data.kind, data.operand)  # x * 1.0, x + 0.0: no instruction
        dst = self.tile(op.value, data.kind, "float32")
        self.b.emit(TensorScalar(dst, data.operand, op, operand.operand, reverse0=reverse, loc=loc))
        return Val(data.kind, dst)

    def _divide(self, a: Val, b: Val, e: Binary) -> Val:
        q = self._reciprocal_quotient(a, b, e)
        if self.carried and q.kind != IMM:  # inside an iteration: IEEE rounding (see _iterate)
            return self.refined_quotient(a, b, q, e.loc)
        note = make("C2N2507", e.loc)
        if note not in self.diags:
            self.diags.append(note)
        return q

    def _reciprocal_quotient(self, a: Val, b: Val, e: Binary) -> Val:
        if b.kind == IMM and isinstance(b.operand, Lit):
            if b.operand.value == 0:
                raise Unsupported("division by the constant zero", e.loc)
            recip = Val(IMM, Lit(1.0 / float(b.operand.value), "float32"))
            if a.kind == IMM:
                return self._scalar_pair(Op.MUL, a, recip, Binary(Op.MUL, e.a, e.b, loc=e.loc))
            return self._tensor_scalar(Op.MUL, a, recip, reverse=False, loc=e.loc)
        if b.kind == IMM and a.kind != IMM:
            return self._tensor_scalar(Op.DIV, a, b, reverse=False, loc=e.loc)
        if b.kind == IMM:
            b = self.materialize_row(b, "den")
        inv = self.tile("recip", b.kind, "float32")
        self.b.emit(Activation(inv, Op.RECIPROCAL, b.operand, loc=e.loc))
        inv_v = Val(b.kind, inv)
        if a.kind == IMM:
            return self._tensor_scalar(Op.MUL, inv_v, a, reverse=False, loc=e.loc)
        if inv_v.kind == ROW and a.kind == FULL:
            return self._tensor_scalar(Op.MUL, a, inv_v, reverse=False, loc=e.loc)
        kind = FULL if FULL in (a.kind, inv_v.kind) else ROW
        if a.kind == ROW and inv_v.kind == FULL:
            return self._tensor_scalar(Op.MUL, inv_v, a, reverse=False, loc=e.loc)
        dst = self.tile("quot", kind, "float32")
        self.b.emit(TensorTensor(dst, Op.MUL, a.operand, inv, loc=e.loc))
        return Val(kind, dst)

    def _select(self, e: Select) -> Val:
        padded = self.window_read(e) if self.window_read is not None else None
        padded = padded if padded is not None else self._padded_read(e)
        if padded is not None:
            return padded
        split = zero_padded(e) if self.window_read is not None else None
        if split is not None and (inner := self.window_read(split[0])) is not None:
            self.cache[self._cache_key(split[0])] = inner
            return self.compile(split[1])
        dtype = self.int_type(e)
        if dtype is not None:
            v = self.int_select(e, dtype)
            if v is not None:
                return v
        c = self.compile(e.cond)
        self.masked += 1
        try:
            a, bv = self.compile(e.a), self.compile(e.b)
        finally:
            self.masked -= 1
        kind = FULL if FULL in (c.kind, a.kind, bv.kind) else ROW
        if c.kind == IMM:
            raise Unsupported("a condition that does not depend on the data or the index", e.loc)
        if c.kind != kind:
            c = self.as_full(c, "pred")
        a = a if a.kind in (IMM, kind) else self.as_full(a)
        bv = bv if bv.kind in (IMM, kind) else self.as_full(bv)
        dst = self.tile("sel", kind, "float32")
        self.b.emit(TensorSelect(dst, c.operand, a.operand, bv.operand, loc=e.loc))
        return Val(kind, dst)

    # ------------------------------------------------------------------ reductions
    def reduce_rows(self, r: Reduce, body_val: Val) -> Val:
        """Reduce a FULL tile along its free axis into a ``[rows, 1]`` tile."""
        if r.op not in REDUCE_OPS:
            raise Unsupported(f"reduction with '{r.op.value}'", r.loc)
        if r.where is not None:
            raise Unsupported("a masked reduction (where=)", r.loc)
        if body_val.kind != FULL:
            raise Unsupported("a reduction whose body does not vary along the reduced axis", r.loc)
        exact = self.exact_int_sum(r, body_val)  # an integer sum fp32 could round: in bytes
        if exact is not None:
            return exact
        acc = r.acc_dtype or "float32"
        dst = self.tile("red", ROW, "float32" if acc in ("float64", "float32") else acc)
        self.b.emit(TensorReduce(dst, r.op, body_val.operand, axes=(1,), loc=r.loc))
        return Val(ROW, dst)

    def loop_reduce(self, r: Reduce) -> Val:
        """A reduction over an axis that is not on the tile whose body moves along the tile's
        free axis (``D[i, j] = sum_k (p[i, k] - c[j, k])^2`` inside a reduction over ``j``): a
        sequential loop over that axis accumulating a full tile, one step per element, in the
        order the CUDA loop adds them."""
        if r.op not in REDUCE_OPS:
            raise Unsupported(f"a reduction with '{r.op.value}' along a loop", r.loc)
        if r.where is not None:
            moving = {a for a in (self.p_axis, self.f_axis) if a} | set(self.index_map)
            moving |= {t.axis for t in self.tap_loops}
            signed = {
                p
                for p, dt in self.params.items()
                if not dt.startswith("uint") and p not in self.sizes
            }
            r = drop_implied_where(r, frozenset(moving), frozenset(signed))
        if r.where is not None:
            body = _mask_read(r.body, r.where) if r.op == Op.ADD else _pad_read(r)
            if body is None:
                raise Unsupported("a masked reduction along a loop", r.loc)
            r = r.replace(body=body, where=None)
        ax = r.axes[0]
        acc = self.tile("acc", FULL, "float32")
        self.b.emit(Memset(acc, Lit(float(r.op.info.identity), "float32"), loc=r.loc))
        # reads go through the reader's own builder: the loop body is what is emitted meanwhile
        start, cache, syms = len(self.b.stmts), self.cache, self.loop_syms
        self.cache, self.loop_syms = {}, syms | {ax.name}
        frame = TapLoop(ax.name, ax.extent)
        self.tap_loops.append(frame)
        try:
            val = self.as_full(self.compile(r.body))
            self.b.emit(TensorTensor(acc, r.op, acc, val.operand, loc=r.loc))
        finally:
            self.cache, self.loop_syms = cache, syms
            self.tap_loops.pop()
        body = tuple(self.b.stmts[start:])
        del self.b.stmts[start:]
        for s in frame.before:  # loads every step reads a window of (a stencil's halo)
            self.b.emit(s)
        kind = LoopKind.SEQUENTIAL
        self.b.emit(Loop(ax.name, Const(0), ax.extent, kind=kind, body=body, loc=r.loc))
        return Val(FULL, acc)

    def reduce_of(self, r: Reduce) -> Val:
        """Compile ``r``; an add-reduction of an activation rides on the activation itself."""
        if r.where is not None:
            return self._masked_reduce(r)
        body = r.body
        if isinstance(body, Binary) and body.op == Op.MUL and body.a == body.b:
            body = Unary(Op.SQUARE, body.a, loc=body.loc)
        val = self.compile(body)
        if r.op != Op.ADD or r.where is not None or val.kind != FULL:
            return self.reduce_rows(r, val)
        at = self._producer(val.operand)
        if at is None:
            return self.reduce_rows(r, val)
        acc = self.tile("red", ROW, "float32")
        alloc = self.b.stmts.pop()  # the row tile's Alloc goes ahead of the activation
        self.b.stmts.insert(at, alloc)
        self.b.stmts[at + 1] = self.b.stmts[at + 1].replace(reduce_dst=acc)
        return Val(ROW, acc)

    def _masked_reduce(self, r: Reduce) -> Val:
        """``reduce(op, f: body where index(K*p + f + c) < n)``: the reads pad the ragged last
        block with the op's identity, so the plain reduction is exact."""
        from cuda2nki.passes._index import flat_guard

        guard = flat_guard(r.where, self.p_axis, r.axes[0].name) if self.p_axis else None
        if guard is None and r.op in REDUCE_OPS and (index_only(r.where) or data_mask_ok(r)):
            # a mask on the positions (a causal row), or on data: the identity where it is off
            val = self.as_full(self.compile(masked_body(r)))
            return self.reduce_rows(r.replace(where=None), val)
        if guard is None or r.op not in REDUCE_OPS:
            raise Unsupported("a reduction masked by a data-dependent condition", r.loc)
        self.flat_guard = (*guard, float(r.op.info.identity))
        self.cache.clear()  # reads under this guard are padded: do not reuse unpadded tiles
        body = r.body
        if not keeps_identity(body, r.op):  # log(pad) is no identity: select it after the body
            ident = Lit(float(r.op.info.identity), "float32")
            body = Select(r.where, body, ident, loc=r.loc)
        try:
            val = self.as_full(self.compile(body)) if body is not r.body else self.compile(body)
        finally:
            self.flat_guard = None
            self.cache.clear()
        return self.reduce_rows(r.replace(where=None), val)

    def _producer(self, tile: View | Lit | Param) -> int | None:
        """Index of the activation that wrote ``tile`` (and has no reduction yet), if any."""
        for n in range(len(self.b.stmts) - 1, -1, -1):
            st = self.b.stmts[n]
            if getattr(st, "dst", None) == tile:
                ok = isinstance(st, Activation) and st.reduce_dst is None and st.op != Op.RECIPROCAL
                return n if ok else None
        return None


def keeps_identity(body: Expr, op: Op) -> bool:
    """Whether ``body`` with every read padded with ``op``'s identity is that identity (a sum of
    products of reads: 0 stays 0; ``log`` of a padded 0 is -inf)."""
    if isinstance(body, Read):
        return True
    if isinstance(body, Cast):
        return keeps_identity(body.x, op)
    if op != Op.ADD:
        return False
    if isinstance(body, Unary):
        return body.op in (Op.NEG, Op.ABS, Op.SQUARE) and keeps_identity(body.x, op)
    if isinstance(body, Binary) and body.op == Op.MUL:
        return keeps_identity(body.a, op) or keeps_identity(body.b, op)
    if isinstance(body, Binary) and body.op in (Op.ADD, Op.SUB):
        return keeps_identity(body.a, op) and keeps_identity(body.b, op)
    return False


def _pad_read(r: Reduce) -> Expr | None:
    """``where ? x[...] : identity`` for a max or min of one read masked by ``where`` (a
    grid-stride maximum's ragged last trip): a load padded with the op's identity."""
    if r.op not in (Op.MAX, Op.MIN) or not isinstance(r.body, Read):
        return None
    pad = Lit(float(r.op.info.identity), "float32")
    return Select(r.where, r.body, pad, loc=r.body.loc)


def _mask_read(e: Expr, where: Expr) -> Expr | None:
    """``where ? e : 0`` as ``e`` with the one factor that reads where ``where`` looks masked
    (``w[k] * x[i + k]`` -> ``w[k] * (where ? x[i + k] : 0)``): the masked read is then a padded
    load (a window), never one out of bounds."""
    from cuda2nki.passes._analysis import moves_along

    if isinstance(e, Read):
        return Select(where, e, Lit(0.0, "float32"), loc=e.loc)
    if isinstance(e, Cast):
        inner = _mask_read(e.x, where)
        return None if inner is None else e.replace(x=inner)
    if isinstance(e, Binary) and e.op == Op.MUL:
        need = moves_along(where) & moves_along(e)  # sizes such as H are not read positions
        # every factor that reads where the mask looks is masked (``x[i] * x[i]``: both reads
        # may fall past the end); a product with one masked factor is zero there
        sides = {}
        for side in ("a", "b"):
            f = getattr(e, side)
            if need <= moves_along(f):
                inner = _mask_read(f, where)
                if inner is None:
                    return None
                sides[side] = inner
        return e.replace(**sides) if sides else None
    return None


def log2_int(n: int) -> int:
    return int(math.log2(n))


def unsupported_error(kernel: str, exc: Unsupported, loc: SourceLoc) -> DiagnosticError:
    return DiagnosticError(make("C2N2501", exc.loc or loc, kernel=kernel, construct=exc.construct))
