"""Rounding and narrowing conversions on tiles, with C's semantics: a part of the tile-expression
compiler (:class:`cuda2nki.passes._tiles.TileExprCompiler` mixes :class:`NarrowingOps` in).

NKI has ``trunc``, ``floor`` and ``ceil`` activations and one float-to-integer conversion (a copy
to an integer tile): round to nearest even, then saturate to the destination range, NaN to 0
(reference NKI.md section 8.4; :mod:`cuda2nki.nkisim.dtypes`).  An integer tile copied to a
narrower integer tile goes through fp32 like every engine operand and saturates too.  C wants:

* ``roundf(x)`` -- halfway cases away from zero: ``t + trunc(2 * (x - t))`` with
  ``t = trunc(x)``.  The fraction ``x - t`` is exact in fp32 and doubling it is exact, so
  ``trunc(2 * frac)`` is +-1 exactly where ``|frac| >= 0.5`` (unlike ``floor(x + 0.5)``, which
  misjudges 0.49999997 and odd integers past 2**23);
* ``rintf(x)`` / ``nearbyintf(x)`` -- halfway cases to even: the conversion itself, on ``x``
  clamped to ``[-2**23, 2**23]`` and converted back; past that clamp every float is an integer
  already and is kept (a select on ``clamped == x``, which NaN fails, so NaN stays NaN);
* a conversion of a rounded float to an integer type (``__float2int_rn(x)``,
  ``(int)rintf(x)``) -- the conversion alone; out of the type's range C leaves the value
  undefined and CUDA's ``cvt`` saturates, as the copy does;
* a conversion of a float to an integer type (``(short)x``) -- ``trunc`` first, then the copy;
* a conversion of an integer to a narrower integer type (``(unsigned char)level``) -- C keeps the
  low bits (modulo ``2**bits``), which the saturating copy does not: ``level & (2**bits - 1)``
  for an unsigned type, ``((level & mask) ^ h) - h`` with ``h = 2**(bits - 1)`` for a signed
  one (bitwise instructions are exact on integer tiles); then the copy, now in range.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.ir.nodes import (
    Activation,
    Binary,
    Cast,
    Expr,
    Lit,
    TensorCopy,
    TensorScalar,
    TensorSelect,
    TensorTensor,
    Unary,
)
from cuda2nki.ir.ops import Op, is_float
from cuda2nki.passes._ints import bounds_of

if TYPE_CHECKING:
    from cuda2nki.passes._tiles import Val

#: rounding functions composed here (the others have an activation)
ROUNDING_OPS = frozenset({Op.ROUND, Op.RINT})
#: functions whose results are integers already
_INTEGRAL = frozenset({Op.ROUND, Op.RINT, Op.TRUNC, Op.FLOOR, Op.CEIL})
#: the float past which every fp32 value is an integer
_EXACT = float(2**23)


class NarrowingOps:
    """Rounding and narrowing conversions (see the module docstring)."""

    # ------------------------------------------------------------------ rounding
    def rounded(self, e: Unary) -> Val:
        """``roundf(x)`` or ``rintf(x)`` as fp32 instructions."""
        src = self._float_tile(e.x)
        if e.op == Op.ROUND:
            return self._round_away(src, e)
        return self._round_even(src, e)

    def _float_tile(self, x: Expr) -> Val:
        from cuda2nki.passes._tiles import IMM

        src = self.compile(x)  # type: ignore[attr-defined]
        return self.materialize_row(src) if src.kind == IMM else src  # type: ignore[attr-defined]

    def _round_away(self, src: Val, e: Unary) -> Val:
        from cuda2nki.passes._tiles import Val

        kind, x = src.kind, src.operand
        t = self.tile("whole", kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(Activation(t, Op.TRUNC, x, loc=e.loc))  # type: ignore[attr-defined]
        frac = self.tile("frac", kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(TensorTensor(frac, Op.SUB, x, t, loc=e.loc))  # type: ignore[attr-defined]
        half = self.tile("half", kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(Activation(half, Op.TRUNC, frac, scale=Lit(2.0, "float32"), loc=e.loc))  # type: ignore[attr-defined]
        dst = self.tile("rounded", kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(TensorTensor(dst, Op.ADD, t, half, loc=e.loc))  # type: ignore[attr-defined]
        return Val(kind, dst)

    def _round_even(self, src: Val, e: Unary) -> Val:
        from cuda2nki.passes._tiles import Val

        kind, x = src.kind, src.operand
        clamped = self.tile("clamped", kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(  # type: ignore[attr-defined]
            TensorScalar(
                clamped,
                x,
                Op.MAX,
                Lit(-_EXACT, "float32"),
                op1=Op.MIN,
                operand1=Lit(_EXACT, "float32"),
                loc=e.loc,
            )
        )
        whole = self.tile("nearest", kind, "int32")  # type: ignore[attr-defined]
        self.b.emit(TensorCopy(whole, clamped, loc=e.loc))  # type: ignore[attr-defined]
        back = self.tile("nearestf", kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(TensorCopy(back, whole, loc=e.loc))  # type: ignore[attr-defined]
        small = self.tile("inrange", kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(TensorTensor(small, Op.EQ, clamped, x, loc=e.loc))  # type: ignore[attr-defined]
        dst = self.tile("rint", kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(TensorSelect(dst, small, back, x, loc=e.loc))  # type: ignore[attr-defined]
        return Val(kind, dst)

    # ------------------------------------------------------------------ conversions
    def rint_cast(self, e: Cast) -> Val | None:
        """``(int)rintf(x)``, ``__float2int_rn(x)``: one copy of ``x`` to the integer type (the
        copy rounds to even), else None."""
        from cuda2nki.passes._tiles import Val

        if is_float(e.dtype) or e.dtype == "bool":
            return None
        if not (isinstance(e.x, Unary) and e.x.op == Op.RINT):
            return None
        src = self._float_tile(e.x.x)
        dst = self.tile("nearest", src.kind, e.dtype)  # type: ignore[attr-defined]
        self.b.emit(TensorCopy(dst, src.operand, loc=e.loc))  # type: ignore[attr-defined]
        return Val(src.kind, dst, e.dtype, *bounds_of(e.dtype))

    def float_to_int(self, v: Val, e: Cast) -> Val:
        """A float converted to an integer type is copied from its value truncated toward zero
        (the copy itself rounds to nearest)."""
        from cuda2nki.passes._tiles import Val

        if isinstance(e.x, Unary) and e.x.op in _INTEGRAL:
            return v  # rounded already: the copy is exact
        dst = self.tile("trunc", v.kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(Activation(dst, Op.TRUNC, v.operand, loc=e.loc))  # type: ignore[attr-defined]
        return Val(v.kind, dst, "float32")

    def wrapped(self, v: Val, e: Cast) -> Val:
        """An integer converted to the narrower integer type of ``e``: its low bits, as C keeps
        them (a value already inside the type is returned as it is)."""
        lo, hi = bounds_of(e.dtype)
        if v.lo is not None and v.hi is not None and lo <= v.lo and v.hi <= hi:
            return v
        word = self.as_int(v, "int32")  # type: ignore[attr-defined]
        low = self.int_bitwise(
            Op.BITAND, word, self._int_lit(hi - lo), "int32", e.loc, (0, hi - lo)
        )  # type: ignore[attr-defined]
        if lo == 0:
            return low
        half = -lo
        flipped = self.int_bitwise(
            Op.BITXOR, low, self._int_lit(half), "int32", e.loc, (0, hi - lo)
        )  # type: ignore[attr-defined]
        return self._shifted(flipped, half, e, (lo, hi))

    def is_truth(self, x: Expr) -> bool:
        """Whether ``x`` is a comparison or a logical operation (C's int 0 or 1)."""
        if isinstance(x, Binary) and x.op.info.kind in ("compare", "logical"):
            return True
        return isinstance(x, Unary) and x.op == Op.LNOT

    def _int_lit(self, value: int) -> Val:
        from cuda2nki.passes._tiles import IMM, Val

        return Val(IMM, Lit(value, "int32"), "int32", value, value)

    def _shifted(self, v: Val, by: int, e: Cast, bounds: tuple[int, int]) -> Val:
        """``v - by`` for a small integer tile: one fp32 instruction (exact)."""
        from cuda2nki.passes._tiles import Val

        dst = self.tile("signed", v.kind, "int32")  # type: ignore[attr-defined]
        self.b.emit(TensorScalar(dst, v.operand, Op.SUB, Lit(float(by), "float32"), loc=e.loc))  # type: ignore[attr-defined]
        return Val(v.kind, dst, "int32", *bounds)


__all__ = ["ROUNDING_OPS", "NarrowingOps"]
