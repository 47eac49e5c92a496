"""The values of a ``__constant__`` table's initialiser, flattened in row-major order.

``{1, 2, 3, 4}`` gives its items; ``{{1, 2, 3}, {4}}`` for a table of rows of three gives each
braced row padded with zeros to the row's length (C's rule for a short row), so that the items
land where the indices read them."""

from __future__ import annotations

import math

from cuda2nki.frontend import ast as A


def table_items(init: object, dims: list[int | None]) -> list[str] | None:
    """The spelled numeric items of ``init`` for a table of extents ``dims``, else None."""
    if not isinstance(init, A.InitList):
        return None
    if any(isinstance(item, A.InitList) for item in init.items):
        if len(dims) < 2 or not all(isinstance(item, A.InitList) for item in init.items):
            return None
        row = math.prod(int(d) for d in dims[1:] if d is not None)
        out: list[str] = []
        for item in init.items:
            sub = table_items(item, dims[1:])
            if sub is None or len(sub) > row:
                return None
            out += sub + ["0"] * (row - len(sub))
        return out
    return _numbers(init.items)


def _numbers(items: tuple[A.Expr, ...]) -> list[str] | None:
    out = []
    for item in items:
        sign = ""
        if isinstance(item, A.Unary) and item.op == "-":
            sign, item = "-", item.operand
        if not isinstance(item, A.IntLit | A.FloatLit):
            return None
        out.append(f"{sign}{item.value!r}")
    return out
