"""Identity operands of binary ops: ``x + 0``, ``x * 1``, ``max(x, -inf)`` ...  Not a pass.

Shared by ``drop-identities`` (intent expressions) and the tile lowering (engine instructions),
so neither emits an instruction that returns its input unchanged.
"""

from __future__ import annotations

import math

from cuda2nki.ir.ops import Op

#: op -> (identity value, whether it is an identity on the left side too)
_IDENTITY: dict[Op, tuple[float, bool]] = {
    Op.ADD: (0.0, True),
    Op.SUB: (0.0, False),
    Op.MUL: (1.0, True),
    Op.DIV: (1.0, False),
    Op.MAX: (-math.inf, True),
    Op.MIN: (math.inf, True),
}


def is_identity(op: Op, value: object, on_left: bool = False) -> bool:
    """Whether ``op(x, value)`` (``op(value, x)`` when ``on_left``) equals ``x`` for every ``x``
    the engines compute on (a signed zero aside: ``-0.0 + 0.0`` is ``+0.0``)."""
    if op not in _IDENTITY or isinstance(value, bool) or not isinstance(value, int | float):
        return False
    unit, commutes = _IDENTITY[op]
    if on_left and not commutes:
        return False
    return float(value) == unit
