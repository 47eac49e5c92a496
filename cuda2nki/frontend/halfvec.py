"""The paired half-precision intrinsics of ``cuda_fp16.h`` / ``cuda_bf16.h`` spelled as lanes.

``__hadd2(a, b)``, ``__halves2half2(lo, hi)``, ``__low2half(h)``... build, combine or pick the
two lanes of a ``__half2`` / ``__nv_bfloat162``.  Each is its lane-by-lane meaning in the
operators and constructors every consumer knows: ``__halves2bfloat162(p, q)`` is ``make_bfloat162(p, q)``, ``__low2half(h)`` is ``h.x``.  Conversions from float round to
nearest, as the ``_rn`` intrinsics and a C cast both do.  Operands with side effects are left
to the call (they would be read once per lane).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from cuda2nki.frontend import ast as A

#: intrinsic -> the operator of its lanes.  Empty: the pair arithmetic (``__hadd2``...) stays a
#: call, which the interpreter and the literal lowering model exactly (fp32, rounded once per
#: lane); spelled as lanes, a port mixing them with the other pair intrinsics disagreed with
#: the interpreter.
_LANE_OPS: dict[str, str] = {}
#: intrinsic -> which operand (and lane) each result lane is: (operand, lane or None: the
#: operand itself, a scalar)
_PICKS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "__halves2half2": ((0, None), (1, None)),
    "__halves2bfloat162": ((0, None), (1, None)),
    "__floats2half2_rn": ((0, None), (1, None)),
    "__floats2bfloat162_rn": ((0, None), (1, None)),
    "__half2half2": ((0, None), (0, None)),
    "__float2half2_rn": ((0, None), (0, None)),
    "__bfloat162bfloat162": ((0, None), (0, None)),
    "__float2bfloat162_rn": ((0, None), (0, None)),
    "__lows2half2": ((0, 0), (1, 0)),
    "__highs2half2": ((0, 1), (1, 1)),
    "__lows2bfloat162": ((0, 0), (1, 0)),
    "__highs2bfloat162": ((0, 1), (1, 1)),
    "__float22half2_rn": ((0, 0), (0, 1)),
    "__float22bfloat162_rn": ((0, 0), (0, 1)),
    "__half22float2": ((0, 0), (0, 1)),
    "__bfloat1622float2": ((0, 0), (0, 1)),
}
_ONE_LANE = {"__low2half": 0, "__high2half": 1, "__low2bfloat16": 0, "__high2bfloat16": 1}


def as_lanes(e: A.Call, pure: Callable[[A.Expr], bool]) -> A.Expr | None:
    """``e`` spelled with lanes and a constructor, None where it is no such intrinsic (or an
    operand has a side effect)."""
    if e.target is not None or not all(map(pure, e.args)):
        return None
    if e.func in _ONE_LANE and len(e.args) == 1 and _pair(e.args[0].ty):
        return _lane(e.args[0], _ONE_LANE[e.func], e.ty)  # type: ignore[arg-type]
    v = e.ty
    if not (_pair(v) and isinstance(v, A.VectorType)):
        return None
    base = dataclasses.replace(v.base, const=False)
    if e.func in _LANE_OPS and len(e.args) == 2 and all(_pair(a.ty) for a in e.args):
        lanes = [
            A.Binary(
                loc=e.loc,
                op=_LANE_OPS[e.func],
                left=_lane(e.args[0], k, base),
                right=_lane(e.args[1], k, base),
                ty=base,
            )  # fmt: skip
            for k in range(2)
        ]
    elif e.func in _PICKS and len(e.args) == 1 + max(i for i, _ in _PICKS[e.func]):
        lanes = [_pick(e.args[i], k, base) for i, k in _PICKS[e.func]]
    else:
        return None
    return A.Call(
        loc=e.loc, func=_make(v), args=tuple(lanes), ty=dataclasses.replace(v, const=False)
    )


def _pair(t: object) -> bool:
    return isinstance(t, A.VectorType) and t.width == 2


def _make(v: A.VectorType) -> str:
    if v.base.name == "bfloat16":
        return "make_bfloat162"
    return "make_half2" if v.base.name == "float16" else f"make_{v.name}"


def _pick(e: A.Expr, k: int | None, base: A.ScalarType) -> A.Expr:
    return _conv(e, base) if k is None else _lane(e, k, base)


def _lane(e: A.Expr, k: int, base: A.CType) -> A.Expr:
    v: A.VectorType = e.ty  # type: ignore[assignment]
    got = A.Member(loc=e.loc, base=e, field="xy"[k], ty=dataclasses.replace(v.base, const=False))
    return _conv(got, base)  # type: ignore[arg-type]


def _conv(e: A.Expr, to: A.ScalarType) -> A.Expr:
    if isinstance(e.ty, A.ScalarType) and e.ty.name == to.name:
        return e
    return A.Cast(loc=e.loc, to=to, operand=e, ty=to)
