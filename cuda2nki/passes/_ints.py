"""32-bit integer expressions on tiles, exact with C's semantics: a part of the tile-expression
compiler (:class:`cuda2nki.passes._tiles.TileExprCompiler` mixes :class:`IntegerOps` in).

The engines compute arithmetic in fp32, exact for integers below 2**24 in magnitude.  Every integer
value the compiler holds carries bounds (``Val.lo`` / ``Val.hi``): a read of an int32 tensor may
be any int32, a literal is its own value, an index or a size parameter (one that sizes a tensor
or a domain) stays below 2**24 -- the layouts' index arithmetic assumes as much -- and an
operation's bounds follow from its operands' (interval arithmetic; a possible wraparound gives the
type's whole range).  Then:

* ``& | ^``, ``<<`` and ``>>`` of unsigned or non-negative values are exact on integer tiles:
  plain ``tensor_tensor`` / ``tensor_scalar`` instructions on tiles of the operation's type;
* ``+ - *`` of small operands with a small result, ``max`` / ``min`` of small operands and
  comparisons with one small operand stay the fp32 instructions they always were (fp32 rounding
  is monotonic and keeps small integers, so ``x < c`` and ``x == c`` are exact for a small ``c``);
* anything else -- ``+ - *`` that may leave 2**24 or wrap, ``/`` and ``%``, ``>>`` of a signed
  value, comparisons and ``max`` / ``min`` of two large values, conversions between int and
  unsigned -- is one :class:`~cuda2nki.ir.nodes.IntArith`, spelled with the bit-exact 32-bit
  helpers the literal lowering uses (``templates/int32_common.py.j2``); a select between large
  values is bitwise (``b ^ ((a ^ b) & mask)``).

Integer results live in tiles of their C type (int32 or uint32: the bit pattern of the value).
The index arithmetic of a row gather's address is left to the fp32 path (it picks one of fewer
than 2**24 rows); an element gather's flat address (``x[i, t[i]]`` as ``i * V + t[i]``) is
compiled exactly, since a loss over ``B * T * V`` logits passes 2**24 elements.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from cuda2nki.ir.nodes import Add as SAdd
from cuda2nki.ir.nodes import (
    Binary,
    Cast,
    Const,
    Dyn,
    Expr,
    IndexValue,
    IntArith,
    Lit,
    Memset,
    Param,
    Read,
    Select,
    SizeExpr,
    Sym,
    TensorCopy,
    TensorScalar,
    TensorTensor,
)
from cuda2nki.ir.nodes import Mul as SMul
from cuda2nki.ir.nodes import Sub as SSub
from cuda2nki.ir.numerics import c_int32
from cuda2nki.ir.ops import Op, is_float
from cuda2nki.ir.types import dtype_of, np_dtype, promote

if TYPE_CHECKING:
    from cuda2nki.passes._tiles import Val

SMALL = 2**24  # |v| < SMALL: an integer fp32 holds exactly, with its neighbours
INT32 = ("int32", "uint32")
_BITWISE = frozenset({Op.BITAND, Op.BITOR, Op.BITXOR, Op.SHL, Op.SHR})
_EXACT_OPS = frozenset(
    {
        Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.MIN,
        Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE,
    }
)  # fmt: skip
_COMMUTES = frozenset(
    {Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.EQ, Op.NE, Op.BITAND, Op.BITOR, Op.BITXOR}
)
_SWAP = {Op.LT: Op.GT, Op.GT: Op.LT, Op.LE: Op.GE, Op.GE: Op.LE}


def bounds_of(dtype: str) -> tuple[int, int]:
    """The values of an integer (or bool) dtype."""
    if dtype == "bool":
        return 0, 1
    info = np.iinfo(np_dtype(dtype))
    return int(info.min), int(info.max)


def _size_nodes(x: SizeExpr):  # noqa: ANN202
    yield x
    for f in ("a", "b"):
        child = getattr(x, f, None)
        if isinstance(child, SizeExpr):
            yield from _size_nodes(child)


def small(lo: int | None, hi: int | None) -> bool:
    return lo is not None and hi is not None and -SMALL < lo and hi < SMALL


def wrap(value: int, dtype: str) -> int:
    """``value`` converted to a 32-bit integer type (modulo 2**32)."""
    u = int(value) % 2**32
    return u - 2**32 if dtype == "int32" and u >= 2**31 else u


def interval(op: Op, a: tuple[int, int], b: tuple[int, int], dtype: str) -> tuple[int, int]:
    """Bounds of ``a op b`` computed in ``dtype`` (its whole range where it may wrap)."""
    full = bounds_of(dtype)
    (alo, ahi), (blo, bhi) = a, b
    const = blo if blo == bhi else None
    r: tuple[int, int] | None = None
    if op == Op.ADD:
        r = (alo + blo, ahi + bhi)
    elif op == Op.SUB:
        r = (alo - bhi, ahi - blo)
    elif op == Op.MUL:
        p = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
        r = (min(p), max(p))
    elif op in (Op.MAX, Op.MIN):
        f = max if op == Op.MAX else min
        r = (f(alo, blo), f(ahi, bhi))
    elif op == Op.DIV and alo >= 0 and blo > 0:
        r = (alo // bhi, ahi // blo)  # non-negative by positive: C's quotient is the floor
    elif op == Op.DIV:
        m = max(abs(alo), abs(ahi))
        r = (-m, m)
    elif op == Op.MOD:
        m = max(abs(blo), abs(bhi)) - 1
        lo, hi = (max(alo, -m) if alo < 0 else 0), (min(ahi, m) if ahi > 0 else 0)
        r = (lo, hi) if m >= 0 else None
    elif op == Op.BITAND and (alo >= 0 or blo >= 0):
        r = (0, min(h for lo, h in (a, b) if lo >= 0))
    elif op in (Op.BITOR, Op.BITXOR) and alo >= 0 and blo >= 0:
        r = (0, (1 << max(ahi, bhi).bit_length()) - 1)
    elif op == Op.SHL and const is not None and 0 <= const < 32:
        r = (alo << const, ahi << const)
    elif op == Op.SHR and const is not None and 0 <= const < 32:
        r = (alo >> const, ahi >> const)
    elif op == Op.SHR:
        r = (min(alo, 0), max(ahi, 0))
    if r is None or r[0] < full[0] or r[1] > full[1]:
        return full
    return r


def fold(op: Op, x: int, y: int, dtype: str) -> int | float:
    """``x op y`` of two integer literals with C's 32-bit semantics."""
    a, b = np.asarray([wrap(x, dtype)], np.int64), np.asarray([wrap(y, dtype)], np.int64)
    return c_int32(op, a, b, dtype == "uint32")[0].item()


class IntegerOps:
    """The integer half of the tile-expression compiler (see the module docstring); mixed into
    :class:`~cuda2nki.passes._tiles.TileExprCompiler`, whose tile and builder helpers it uses."""

    # ------------------------------------------------------------------ types and bounds
    def int_type(self, e: Binary | Select) -> str | None:
        """The 32-bit integer type ``e`` computes in (its operands' promoted type), else None."""
        if self.types is None or self.addressing:  # type: ignore[attr-defined]
            return None
        if isinstance(e, Binary) and e.op in (Op.LAND, Op.LOR):
            return None
        try:
            t = promote(dtype_of(e.a, self.types), dtype_of(e.b, self.types))  # type: ignore[attr-defined]
        except TypeError:
            return None
        if is_float(t) or t == "bool":
            return None
        return t if t in INT32 else ("int32" if t in ("int8", "uint8", "int16", "uint16") else None)

    def type_of(self, e: Expr) -> str:
        """``e``'s dtype ("" where types are not known, or in a gather address)."""
        if self.types is None or self.addressing:  # type: ignore[attr-defined]
            return ""
        try:
            return dtype_of(e, self.types)  # type: ignore[attr-defined]
        except TypeError:
            return ""

    def ring_value(self, x: SizeExpr, dtype: str, loc) -> Expr | None:
        """An integer index over data (``1 + 3 * $(v)``: the lifter's spelling of C integer
        arithmetic on data) as a value expression in ``dtype``: sums and products agree modulo
        2**32, so C's wraparound is kept.  None: no data in it, or other operations."""
        if dtype not in INT32 or not any(isinstance(d, Dyn) for d in _size_nodes(x)):
            return None

        def conv(s: SizeExpr) -> Expr | None:
            if isinstance(s, Const):
                return Lit(wrap(s.value, dtype), dtype, loc=loc)
            if isinstance(s, Dyn):
                return Cast(dtype, s.expr, loc=loc)
            if isinstance(s, Sym):
                if s.name in self.params:  # type: ignore[attr-defined]
                    return Cast(dtype, Param(s.name, loc=loc), loc=loc)
                return IndexValue(s, dtype, loc=loc)
            op = {SAdd: Op.ADD, SSub: Op.SUB, SMul: Op.MUL}.get(type(s))
            if op is None:
                return None
            a, b = conv(s.a), conv(s.b)  # type: ignore[attr-defined]
            return None if a is None or b is None else Binary(op, a, b, loc=loc)

        return conv(x)

    def leaf_bounds(self, e: Expr, v: Val) -> Val:
        """Bounds of a leaf's value: literals exact, indices and size parameters small, reads
        and other parameters their dtype's range."""
        if v.lo is not None:
            return v
        dt = v.dtype
        if isinstance(e, Lit) and not isinstance(e.value, float):
            return dataclasses.replace(v, lo=int(e.value), hi=int(e.value))
        if isinstance(e, (Param, IndexValue)):
            names = {e.name} if isinstance(e, Param) else set(e.expr.free_syms())
            values = {s for s in names if s in self.params and s not in self.sizes}  # type: ignore[attr-defined]
            if not values:
                return dataclasses.replace(v, lo=-SMALL + 1, hi=SMALL - 1)
        elif isinstance(e, Read) and self.addressing:  # type: ignore[attr-defined]
            return dataclasses.replace(v, lo=-SMALL + 1, hi=SMALL - 1)
        if is_float(dt):
            return v
        return dataclasses.replace(v, lo=bounds_of(dt)[0], hi=bounds_of(dt)[1])

    def _range(self, v: Val, dtype: str) -> tuple[int, int]:
        """``v``'s bounds as an operand of a ``dtype`` operation (converted to it)."""
        if v.lo is None or v.hi is None:
            return bounds_of(dtype)
        lo, hi = bounds_of(dtype)
        if v.lo < lo or v.hi > hi:
            return lo, hi
        return v.lo, v.hi

    def storage(self, v: Val) -> str | None:
        """The dtype of the tile holding ``v`` (None: an immediate)."""
        if v.kind == "imm":
            return None
        return self.b.dtypes.get(v.operand.tensor, "float32")  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ binary operations
    def int_binary(self, e: Binary, dtype: str) -> tuple[Val | None, tuple[int, int] | None]:
        """``e`` on 32-bit integers: (the value, None) where it needs the integer path, else
        (None, its bounds) and the fp32 instructions compute it exactly."""
        a, b = self.compile(e.a), self.compile(e.b)  # type: ignore[attr-defined]
        ra, rb = self._range(a, dtype), self._range(b, dtype)
        op = e.op
        if op.info.kind == "compare":
            if small(*ra) or small(*rb):
                return None, (0, 1)
            return self.int_op(op, a, b, dtype, "float32", e.loc, (0, 1)), None
        if op not in _EXACT_OPS and op not in _BITWISE:
            return None, None
        r = interval(op, ra, rb, dtype)
        if op in (Op.ADD, Op.SUB, Op.MUL, Op.MAX, Op.MIN) and small(*ra) and small(*rb):
            if op in (Op.MAX, Op.MIN) or small(*r):
                return None, r
        shifted = self._power_of_two(op, a, b, ra, dtype, e.loc, r)
        if shifted is not None:
            return shifted, None
        if op in (Op.DIV, Op.MOD) and isinstance(b.operand, Lit) and b.operand.value == 0:
            from cuda2nki.passes._tiles import Unsupported

            raise Unsupported("integer division by the constant zero", e.loc)
        if op in _BITWISE and (op != Op.SHR or dtype == "uint32" or ra[0] >= 0):
            return self.int_bitwise(op, a, b, dtype, e.loc, r), None
        return self.int_op(op, a, b, dtype, dtype, e.loc, r), None

    def _power_of_two(self, op: Op, a: Val, b: Val, ra, dtype: str, loc, r) -> Val | None:
        """``a / 2**k`` and ``a % 2**k`` of a non-negative ``a``: C's quotient and remainder are
        ``a >> k`` and ``a & (2**k - 1)``, exact bitwise instructions."""
        if op not in (Op.DIV, Op.MOD) or ra[0] < 0 or not isinstance(b.operand, Lit):
            return None
        k = b.operand.value
        if isinstance(k, float) or k <= 0 or k & (k - 1):
            return None
        from cuda2nki.passes._tiles import IMM, Val

        if op == Op.DIV:
            by = Val(
                IMM, Lit(k.bit_length() - 1, dtype), dtype, k.bit_length() - 1, k.bit_length() - 1
            )
            return self.int_bitwise(Op.SHR, a, by, dtype, loc, r)
        mask = Val(IMM, Lit(k - 1, dtype), dtype, k - 1, k - 1)
        return self.int_bitwise(Op.BITAND, a, mask, dtype, loc, r)

    def _imm(self, v: Val, dtype: str) -> Lit | Param:
        if isinstance(v.operand, Lit):
            return Lit(wrap(int(v.operand.value), dtype), dtype)
        return v.operand

    def _folded(self, op: Op, a: Val, b: Val, dtype: str, r) -> Val | None:
        from cuda2nki.passes._tiles import IMM, Val

        if not (isinstance(a.operand, Lit) and isinstance(b.operand, Lit)):
            return None
        v = fold(op, int(a.operand.value), int(b.operand.value), dtype)
        if op.info.kind == "compare":
            return Val(IMM, Lit(float(v), "float32"), "float32", int(v), int(v))
        return Val(IMM, Lit(int(v), dtype), dtype, int(v), int(v))

    def _pair(self, op: Op, a: Val, b: Val, dtype: str) -> tuple[Op, Val, Val]:
        """Operands as the integer instruction wants them: a tile of ``dtype`` first (swapping a
        commuting operation, materialising an immediate otherwise), tiles of one shape."""
        from cuda2nki.passes._tiles import IMM

        if a.kind == IMM and b.kind != IMM and (op in _COMMUTES or op in _SWAP):
            op, a, b = _SWAP.get(op, op), b, a
        a = self.as_int(a, dtype)
        if b.kind != IMM:
            b = self.as_int(b, dtype)
            if a.kind != b.kind:
                a, b = self.int_full(a, dtype), self.int_full(b, dtype)
        return op, a, b

    def int_bitwise(self, op: Op, a: Val, b: Val, dtype: str, loc, r) -> Val:
        """``& | ^ << >>`` on integer tiles: one plain engine instruction (exact on bits)."""
        from cuda2nki.passes._tiles import IMM, Val

        folded = self._folded(op, a, b, dtype, r)
        if folded is not None:
            return folded
        op, a, b = self._pair(op, a, b, dtype)
        dst = self.tile(op.value, a.kind, dtype)  # type: ignore[attr-defined]
        if b.kind == IMM:
            self.b.emit(TensorScalar(dst, a.operand, op, self._imm(b, dtype), loc=loc))  # type: ignore[attr-defined]
        else:
            self.b.emit(TensorTensor(dst, op, a.operand, b.operand, loc=loc))  # type: ignore[attr-defined]
        return Val(a.kind, dst, dtype, *r)

    def int_op(self, op: Op, a: Val, b: Val, dtype: str, out: str, loc, r) -> Val:
        """One exact 32-bit instruction (:class:`IntArith`) writing a tile of ``out``."""
        from cuda2nki.passes._tiles import IMM, Val

        folded = self._folded(op, a, b, dtype, r)
        if folded is not None:
            return folded
        op, a, b = self._pair(op, a, b, dtype)
        dst = self.tile(op.value, a.kind, out)  # type: ignore[attr-defined]
        opnd = self._imm(b, dtype) if b.kind == IMM else b.operand
        self.b.emit(IntArith(dst, op, a.operand, opnd, unsigned=dtype == "uint32", loc=loc))  # type: ignore[attr-defined]
        return Val(a.kind, dst, "float32" if out == "float32" else dtype, *r)

    # ------------------------------------------------------------------ tiles of integers
    def as_int(self, v: Val, dtype: str) -> Val:
        """``v`` in a tile of ``dtype`` holding its C value (converted modulo 2**32)."""
        from cuda2nki.passes._tiles import IMM, ROW, Val

        if v.kind == IMM:
            dst = self.tile("ival", ROW, dtype)  # type: ignore[attr-defined]
            imm = self._imm(v, dtype)
            if isinstance(imm, Lit) and abs(int(imm.value)) < SMALL:  # a memset holds it exactly
                self.b.emit(Memset(dst, imm, loc=self.loc))  # type: ignore[attr-defined]
                return Val(ROW, dst, dtype, v.lo, v.hi)
            self.b.emit(Memset(dst, Lit(0, dtype), loc=self.loc))  # type: ignore[attr-defined]
            self.b.emit(TensorScalar(dst, dst, Op.BITOR, imm, loc=self.loc))  # type: ignore[attr-defined]
            return Val(ROW, dst, dtype, v.lo, v.hi)
        st = self.storage(v)
        if st == dtype:
            return dataclasses.replace(v, dtype=dtype)
        if st is not None and is_float(st):  # a small integer computed in fp32: exact
            inter = "int32" if (v.lo is None or v.lo < 0) else dtype
            dst = self.tile("ival", v.kind, inter)  # type: ignore[attr-defined]
            self.b.emit(TensorCopy(dst, v.operand, loc=self.loc))  # type: ignore[attr-defined]
            v = Val(v.kind, dst, inter, v.lo, v.hi)
            if inter == dtype:
                return v
        # another integer type: the value converted, the bit pattern kept (C's conversion)
        dst = self.tile("ival", v.kind, dtype)  # type: ignore[attr-defined]
        unsigned = dtype == "uint32"
        self.b.emit(IntArith(dst, Op.BITOR, v.operand, Lit(0, "int32"), unsigned, loc=self.loc))  # type: ignore[attr-defined]
        lo, hi = self._range(v, dtype)
        return Val(v.kind, dst, dtype, lo, hi)

    def int_full(self, v: Val, dtype: str) -> Val:
        """An integer ``[rows, 1]`` tile (or immediate) broadcast to ``[rows, cols]``, exactly."""
        from cuda2nki.passes._tiles import FULL, Val

        if v.kind == FULL:
            return v
        v = self.as_int(v, dtype)
        dst = self.tile("b", FULL, dtype)  # type: ignore[attr-defined]
        self.b.emit(Memset(dst, Lit(0, dtype), loc=self.loc))  # type: ignore[attr-defined]
        self.b.emit(TensorScalar(dst, dst, Op.BITOR, v.operand, loc=self.loc))  # type: ignore[attr-defined]
        return Val(FULL, dst, dtype, v.lo, v.hi)

    def is_wide(self, v: Val) -> bool:
        """Whether ``v`` is an integer the fp32 engines may not hold exactly."""
        return v.dtype in INT32 and not small(v.lo, v.hi)

    # ------------------------------------------------------------------ selects and casts
    def int_select(self, e: Select, dtype: str) -> Val | None:
        """``c ? a : b`` between integers beyond fp32's exact range: ``b ^ ((a ^ b) & m)`` with
        the mask ``m = -(c != 0)`` (all ones where the condition holds), exact on the bits."""
        from cuda2nki.passes._tiles import FULL, IMM, Val

        a, b = self.compile(e.a), self.compile(e.b)  # type: ignore[attr-defined]
        ra, rb = self._range(a, dtype), self._range(b, dtype)
        if small(*ra) and small(*rb):
            return None
        c = self.compile(e.cond)  # type: ignore[attr-defined]
        if c.kind == IMM:
            return None
        kind = FULL if FULL in (c.kind, a.kind, b.kind) else c.kind
        a, b = self.as_int(a, dtype), self.as_int(b, dtype)
        if kind == FULL:
            a, b = self.int_full(a, dtype), self.int_full(b, dtype)
            c = self.as_full(c, "pred")  # type: ignore[attr-defined]
        m = self.tile("mask", kind, "int32")  # type: ignore[attr-defined]
        self.b.emit(  # type: ignore[attr-defined]
            TensorScalar(m, c.operand, Op.NE, Lit(0.0), op1=Op.MUL, operand1=Lit(-1.0), loc=e.loc)
        )
        diff = self.tile("bitxor", kind, dtype)  # type: ignore[attr-defined]
        self.b.emit(TensorTensor(diff, Op.BITXOR, a.operand, b.operand, loc=e.loc))  # type: ignore[attr-defined]
        self.b.emit(TensorTensor(diff, Op.BITAND, diff, m, loc=e.loc))  # type: ignore[attr-defined]
        dst = self.tile("sel", kind, dtype)  # type: ignore[attr-defined]
        self.b.emit(TensorTensor(dst, Op.BITXOR, b.operand, diff, loc=e.loc))  # type: ignore[attr-defined]
        return Val(kind, dst, dtype, min(ra[0], rb[0]), max(ra[1], rb[1]))

    def int_cast(self, v: Val, dtype: str) -> Val:
        """An integer value converted to another 32-bit integer type (C: modulo 2**32)."""
        lo, hi = bounds_of(dtype)
        if v.lo is not None and v.hi is not None and lo <= v.lo and v.hi <= hi:
            return dataclasses.replace(v, dtype=dtype)  # the value is unchanged
        return self.as_int(v, dtype)
