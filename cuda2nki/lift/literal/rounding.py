"""``roundf(x)`` (and ``round`` on a float): to the nearest integer, halfway cases away from
zero.  NKI has no such instruction; it is ``trunc(x) + sign(x) * (|x - trunc(x)| >= 0.5)``,
exact in fp32 (the fraction ``x - trunc(x)`` is exact, so no halfway case is misjudged, unlike
``floor(x + 0.5)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.lift.literal.values import Tile, Uni, Value

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

ROUND_AWAY = {"roundf", "round"}


def round_away(low: Lowerer, v: Value, node: object) -> Value:
    if isinstance(v, Uni):
        x = f"np.float32({v.expr})"
        return Uni(
            f"np.float32(np.trunc({x}) + np.sign({x}) * (abs({x} - np.trunc({x})) >= 0.5))",
            "float",
        )
    x = low.tile(v, "float", node)  # type: ignore[arg-type]
    t = low.op("trunc", [x], "float").expr
    frac = low.op("abs", [low.op("subtract", [x, t], "float").expr], "float").expr
    half = low.op("greater_equal", [frac, "0.5"], "float").expr
    step = low.op("multiply", [low.op("sign", [x], "float").expr, half], "float").expr
    return Tile(low.op("add", [t, step], "float").expr, "float")
