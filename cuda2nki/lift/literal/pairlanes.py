"""Two-lane half and bfloat16 vectors built, taken apart and combined by intrinsics.

``__halves2bfloat162(a, b)``, ``__floats2half2_rn(a, b)``, ``__half2half2(h)``,
``__lows2half2(p, q)``, ``__half22float2(p)``... are vector values whose lanes are their
arguments (converted to the lane type, rounding to nearest as the ``_rn`` names say), an argument
repeated, or lanes of vector arguments; ``__low2half(p)``, ``__high2bfloat16(p)``,
``__low2float(p)`` are one lane of a vector; ``__hneg2``/``__habs2`` negate or take the
magnitude of each lane.  ``__hadd2``/``__hsub2``/``__hmul2`` compute lane by lane in fp32 and
round to the lane type: with 11 (half) or 8 (bfloat16) significand bits, fp32's 24 make that one rounding of
the exact result, as the 16-bit instruction gives.  The scalarisation
(:mod:`cuda2nki.lift.literal.scalarise`) asks here for each lane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.vecscan import is_vec

if TYPE_CHECKING:
    from cuda2nki.lift.literal.scalarise import Scalariser

#: lane k is argument k
_PACK = frozenset({"__halves2half2", "__halves2bfloat162", "__floats2half2_rn",
                   "__floats2bfloat162_rn"})  # fmt: skip
#: every lane is the one argument
_DUP = frozenset({"__half2half2", "__float2half2_rn", "__bfloat162bfloat162"})
#: lane k is lane (0 or 1) of argument k
_PICK = {"__lows2half2": 0, "__lows2bfloat162": 0, "__highs2half2": 1, "__highs2bfloat162": 1}
#: lane k is lane k of the one argument, converted
_EACH = frozenset({"__half22float2", "__bfloat1622float2", "__float22half2_rn",
                   "__float22bfloat162_rn"})  # fmt: skip
#: lane by lane in fp32, rounded to the lane type
_ARITH = {"__hadd2": "+", "__hsub2": "-", "__hmul2": "*"}
#: one lane of a vector argument, as a scalar of the call's type
_ONE = {"__low2half": 0, "__low2bfloat16": 0, "__low2float": 0,
        "__high2half": 1, "__high2bfloat16": 1, "__high2float": 1}  # fmt: skip

_F32 = A.ScalarType(name="float32")


def lane_of(sc: Scalariser, e: A.Expr, k: int, base: A.ScalarType) -> A.Expr | None:
    """Lane ``k`` (of type ``base``) of the vector expression ``e``, or None when ``e`` is none
    of the forms above."""
    if not isinstance(e, A.Call) or e.target is not None:
        return None
    f, args = e.func, e.args
    if f in _PACK and len(args) == 2:
        return sc.conv(sc.rw(args[k]), base)
    if f in _DUP and len(args) == 1:
        return sc.conv(sc.rw(args[0]), base)
    if f in _PICK and len(args) == 2:
        return sc.conv(sc.lane(args[k], _PICK[f]), base)
    if f in _EACH and len(args) == 1:
        return sc.conv(sc.lane(args[0], k), base)
    if f in _ARITH and len(args) == 2:
        return _rounded(sc, _ARITH[f], args, k, base, e.loc)
    if f in ("__hneg2", "__habs2") and len(args) == 1:  # exact in any format
        x = sc.conv(sc.lane(args[0], k), _F32)
        if f == "__hneg2":
            return sc.conv(A.Unary(loc=e.loc, op="-", operand=x, ty=_F32), base)
        return sc.conv(A.Call(loc=e.loc, func="fabsf", args=(x,), ty=_F32), base)
    return None


def scalar_of_call(sc: Scalariser, e: A.Call) -> A.Expr | None:
    """``__low2half(p)`` and its kin of a vector ``p``: that lane as the call's type."""
    j = _ONE.get(e.func)
    if j is None or len(e.args) != 1 or not is_vec(e.args[0].ty):
        return None
    if not isinstance(e.ty, A.ScalarType):
        return None
    return sc.conv(sc.lane(e.args[0], j), e.ty)


def _rounded(sc: Scalariser, op: str, args: tuple[A.Expr, ...], k: int, base: A.ScalarType,
             loc: object) -> A.Expr:  # fmt: skip
    left, right = (sc.conv(sc.lane(a, k), _F32) for a in args)
    exact = A.Binary(loc=loc, op=op, left=left, right=right, ty=_F32)  # type: ignore[arg-type]
    return sc.conv(exact, base)


__all__ = ["lane_of", "scalar_of_call"]
