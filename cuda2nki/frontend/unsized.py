"""C's rule for an array declared without its first extent: ``T a[] = {...}`` has as many
elements as its initialiser gives (``T a[][3] = {1, 2, 3, 4}`` two rows: a flat list fills rows
in order, braced items are one row each)."""

from __future__ import annotations

import dataclasses
import math

from cuda2nki.frontend import ast as A


def sized_by_init(ty: A.CType, init: A.Expr | None) -> A.CType:
    """``ty`` with an unsized first extent set from the initialiser ``init``; else ``ty``."""
    if not (isinstance(ty, A.ArrayType) and ty.dims and ty.dims[0] is None):
        return ty
    rest = ty.dims[1:]
    if not isinstance(init, A.InitList) or None in rest:
        return ty
    row = math.prod(d for d in rest if d is not None)
    braced = [isinstance(item, A.InitList) for item in init.items]
    if rest and all(braced):
        rows = len(init.items)
    elif not any(braced):
        rows = -(-len(init.items) // row)
    else:  # brace elision mixing rows and loose items: left to the declared size
        return ty
    return dataclasses.replace(ty, dims=(rows, *rest)) if rows else ty
