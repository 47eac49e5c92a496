"""The bytes of a struct initialised in memory: ``__constant__ S table[N] = {{...}, ...};``.

A struct in memory is a ``uint8`` vector of its C size (see
:mod:`cuda2nki.frontend.aggregates`); an initialiser written member by member becomes the
bytes of that layout: each member's constant value packed little-endian at its byte offset,
padding and members left out zero.  A pointer member may only be null.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType, layout

#: struct-module codes of the scalar types (little-endian, no padding)
_PACK = {
    "bool": "<?",
    "int8": "<b",
    "uint8": "<B",
    "int16": "<h",
    "uint16": "<H",
    "int32": "<i",
    "uint32": "<I",
    "int64": "<q",
    "uint64": "<Q",
    "float16": "<e",
    "float32": "<f",
    "float64": "<d",
}

Fold = Callable[[A.Expr], "int | float | None"]


def struct_bytes(ty: AggregateType, init: A.Expr, fold: Fold) -> bytes | None:
    """The bytes of struct ``ty`` initialised by ``init`` (an initialiser list, members in
    order), else None when a value is not a constant or a member has no packed form."""
    lay = layout(ty)
    if lay is None or not isinstance(init, A.InitList):
        return None
    offs, size, _ = lay
    buf = bytearray(size)
    if len(init.items) > len(ty.fields):
        return None
    for (member, mty), item in zip(ty.fields, init.items, strict=False):
        got = _value_bytes(mty, item, fold)
        if got is None:
            return None
        buf[offs[member] : offs[member] + len(got)] = got
    return bytes(buf)


def _value_bytes(ty: object, item: A.Expr, fold: Fold) -> bytes | None:
    if isinstance(ty, AggregateType):
        return struct_bytes(ty, item, fold)
    if isinstance(ty, A.ArrayType) and len(ty.dims) == 1 and isinstance(item, A.InitList):
        parts = [_value_bytes(ty.elem, it, fold) for it in item.items]
        if any(p is None for p in parts) or len(parts) > (ty.dims[0] or 0):
            return None
        return b"".join(parts)  # type: ignore[arg-type]
    if isinstance(ty, A.VectorType) and isinstance(item, A.InitList):
        lanes = [_value_bytes(ty.base, it, fold) for it in item.items]
        return None if any(p is None for p in lanes) else b"".join(lanes)  # type: ignore[arg-type]
    value = fold(item)
    if value is None:
        return None
    if isinstance(ty, A.PointerType):
        return bytes(8) if value == 0 else None
    code = _PACK.get(getattr(ty, "name", ""))
    if code is None:
        return None
    if code[1] in "efd":
        return struct.pack(code, float(value))
    bits = struct.calcsize(code) * 8
    v = int(value) & ((1 << bits) - 1)  # C conversion: wrap to the member's width
    return v.to_bytes(bits // 8, "little")


def blob_items(elem: AggregateType, init: A.Expr, count: int, fold: Fold) -> Sequence[bytes] | None:
    """Per element of an array of ``count`` structs ``elem`` initialised by ``init``, its
    bytes (elements left out are zero); None when one cannot be packed."""
    if not isinstance(init, A.InitList) or len(init.items) > count:
        return None
    size = layout(elem)
    if size is None:
        return None
    out: list[bytes] = []
    for item in init.items:
        got = struct_bytes(elem, item, fold)
        if got is None:
            return None
        out.append(got)
    out.extend(bytes(size[1]) for _ in range(count - len(out)))
    return out


def blob_init(elem: AggregateType, ty: object, init: A.Expr, fold: Fold) -> A.Expr | None:
    """The initialiser of an array of structs in memory (``ty``: an array of their bytes)
    written member by member, as one byte vector per element; None when it cannot be packed."""
    from cuda2nki.frontend.ast import fast as N
    from cuda2nki.frontend.lower import _vector_ctor

    if not isinstance(ty, A.ArrayType) or len(ty.dims) != 1 or ty.dims[0] is None:
        return None
    blob = ty.elem
    items = blob_items(elem, init, ty.dims[0], fold)
    if items is None or not isinstance(blob, A.VectorType):
        return None
    u8 = blob.base
    elems = [
        _vector_ctor(blob, [N.IntLit(loc=init.loc, value=b, ty=u8) for b in data], init.loc)
        for data in items
    ]
    return N.InitList(loc=init.loc, items=tuple(elems), ty=ty)
