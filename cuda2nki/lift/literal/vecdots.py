"""The vector overloads of the byte dot products, scalarised: ``__dp4a(char4 a, char4 b, c)``
(``uchar4`` for the unsigned form) is ``c + a.x*b.x + a.y*b.y + a.z*b.z + a.w*b.w`` and
``__dp2a_lo(short2 a, char4 b, c)`` is ``c + a.x*b.x + a.y*b.y`` (``_hi``: with ``b.z``,
``b.w``), each lane widened to ``int`` (C's promotion; the products fit) and the sum taken in
the call's type, which wraps in 32 bits as the instruction does."""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import INT

#: dot product -> (lane of a, lane of b) of each term
PAIRS = {
    "__dp4a": ((0, 0), (1, 1), (2, 2), (3, 3)),
    "__dp2a_lo": ((0, 0), (1, 1)),
    "__dp2a_hi": ((0, 2), (1, 3)),
}


def is_vector_dot(e: A.Expr, is_vec: Callable[[object], bool]) -> bool:
    """Whether ``e`` is a byte dot product called with vector operands."""
    return isinstance(e, A.Call) and e.func in PAIRS and len(e.args) == 3 and is_vec(e.args[0].ty)


def vector_dot(e: A.Call, lane: Callable[[A.Expr, int], A.Expr], acc: A.Expr) -> A.Expr:
    """``e``'s sum of lane products plus ``acc`` (the scalarised accumulator)."""
    ty = e.ty

    def widen(x: A.Expr, to: object) -> A.Expr:
        return x if x.ty == to else A.Cast(loc=e.loc, to=to, operand=x, ty=to)

    total = widen(acc, ty)
    for i, j in PAIRS[e.func]:
        prod = A.Binary(loc=e.loc, op="*", left=widen(lane(e.args[0], i), INT),
                        right=widen(lane(e.args[1], j), INT), ty=INT)  # fmt: skip
        total = A.Binary(loc=e.loc, op="+", left=total, right=widen(prod, ty), ty=ty)
    return total


__all__ = ["PAIRS", "is_vector_dot", "vector_dot"]
