"""``sizeof`` of the file's own structs, for the host evaluator.

The host evaluator reads ``cudaMalloc(&d_w, count * sizeof(Window))`` on the syntax tree, where
a builtin or a typedef of one has a known size but a struct of the file had none (it was taken as
4 bytes, with a note): the allocation then counted a 24-byte ``Window`` as 4 bytes, and a
binding inferred from it was too small.  The struct's size is the one the kernel side lays it out
with: a record of like scalars (``struct { float re, im; }``: its lanes), an aggregate (its C
layout, padding included).
"""

from __future__ import annotations

from collections.abc import Callable

import tree_sitter as ts

from cuda2nki.frontend.aggregates import layout
from cuda2nki.frontend.lower import BodyLowerer
from cuda2nki.frontend.typesys import sizeof
from cuda2nki.frontend.unit import UnitContext


def struct_bytes(unit: UnitContext, root: ts.Node) -> Callable[[str], int | None]:
    """``name -> bytes`` of a struct or record type of ``unit`` (None: not one, or unsized);
    ``root`` is its syntax tree (where a refusal would point)."""
    low = BodyLowerer(unit, "<file>", host=True)
    memo: dict[str, int | None] = {}

    def get(name: str) -> int | None:
        if name not in memo:
            memo[name] = _bytes(unit, low, name, root)
        return memo[name]

    return get


def _bytes(unit: UnitContext, low: BodyLowerer, name: str, root: ts.Node) -> int | None:
    try:
        if name in unit.aggregates or name in unit.aggregate_types:
            agg = low.aggregate_type(name, root)
            lay = layout(agg) if agg is not None else None
            return lay[1] if lay is not None else None
        ty = low._named_quietly(name)
    except Exception:  # noqa: BLE001 - a struct the lowering refuses has no size here
        return None
    return sizeof(ty) if ty is not None else None
