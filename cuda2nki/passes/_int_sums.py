"""Sums of 32-bit integers along a tile's rows, exact with C's wraparound: a part of the
tile-expression compiler (:class:`cuda2nki.passes._tiles.TileExprCompiler` mixes
:class:`IntSumOps` in).

The engines add in fp32, exact while every partial sum stays below 2**24.  An integer row sum
whose terms and length do not keep it there (a quantised dot product's terms reach 2**16, its
length is a parameter) is taken apart into the four bytes of each term's bit pattern: each
byte's row sum is at most ``255 * n``, exact for any row an SBUF partition holds; the four sums
are shifted into place and added modulo 2**32::

    sum_j x[i, j]  ->  s_k = sum_j (x[i, j] >> 8k) & 255   (k = 0..3, fp32, exact)
                       s_0 + (s_1 << 8) + (s_2 << 16) + (s_3 << 24)   (modulo 2**32)

Masking the bytes of the bit pattern makes the signed and unsigned cases one: the bit pattern
of the sum modulo 2**32 is what C's int (or unsigned) addition leaves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.ir.nodes import Const, Lit, Reduce, TensorReduce
from cuda2nki.ir.ops import Op
from cuda2nki.passes._ints import SMALL, bounds_of
from cuda2nki.passes.fold_sizes import fold_size

if TYPE_CHECKING:
    from cuda2nki.passes._tiles import Val


class IntSumOps:
    """Exact integer row sums (mixed into the tile-expression compiler)."""

    def exact_int_sum(self, r: Reduce, v: Val) -> Val | None:
        """``r``'s row sum of the integer tile value ``v`` in bytes, where fp32 addition could
        round it; None where the plain reduction is exact (or ``r`` is no integer sum)."""
        dtype = _int_dtype(r, v)
        if dtype is None or _small_sum(r, v):
            return None
        from cuda2nki.passes._tiles import IMM, ROW, Val

        x = self.as_int(v, dtype)  # type: ignore[attr-defined]
        total = None
        for k in range(4):
            part = x
            if k:
                by = Val(IMM, Lit(8 * k, dtype), dtype, 8 * k, 8 * k)
                part = self.int_bitwise(Op.SHR, x, by, dtype, r.loc, bounds_of(dtype))  # type: ignore[attr-defined]
            mask = Val(IMM, Lit(255, dtype), dtype, 255, 255)
            byte = self.int_bitwise(Op.BITAND, part, mask, dtype, r.loc, (0, 255))  # type: ignore[attr-defined]
            dst = self.tile("bytesum", ROW, "float32")  # type: ignore[attr-defined]
            self.b.emit(TensorReduce(dst, Op.ADD, byte.operand, axes=(1,), loc=r.loc))  # type: ignore[attr-defined]
            s = self.as_int(Val(ROW, dst, "float32", 0, SMALL - 1), dtype)  # type: ignore[attr-defined]
            if k:
                by = Val(IMM, Lit(8 * k, dtype), dtype, 8 * k, 8 * k)
                s = self.int_bitwise(Op.SHL, s, by, dtype, r.loc, bounds_of(dtype))  # type: ignore[attr-defined]
            total = (
                s
                if total is None
                else self.int_op(  # type: ignore[attr-defined]
                    Op.ADD, total, s, dtype, dtype, r.loc, bounds_of(dtype)
                )
            )
        return total


def _int_dtype(r: Reduce, v: Val) -> str | None:
    """The C type of an integer add-reduction (None: not one)."""
    if r.op != Op.ADD or r.where is not None:
        return None
    if r.acc_dtype is not None:
        return r.acc_dtype if r.acc_dtype in ("int32", "uint32") else None
    if v.lo is None or v.hi is None:  # not known to be an integer
        return None
    return "uint32" if v.dtype == "uint32" else "int32"


def _small_sum(r: Reduce, v: Val) -> bool:
    """Every partial sum provably stays below 2**24 (a constant row length, known bounds)."""
    n = fold_size(r.axes[0].extent)
    if not isinstance(n, Const) or v.lo is None or v.hi is None:
        return False
    return max(abs(v.lo), abs(v.hi)) * max(n.value, 1) < SMALL
