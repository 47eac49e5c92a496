"""Narrower views of one element: ``const int8_t* b = (const int8_t*)&a[i]`` reads the bytes of
``a[i]`` (``b[0] .. b[3]`` of a 32-bit element), for the extent scan
(:mod:`cuda2nki.lift.extents`).

A view's constant index below the element's width in view items stays inside the element, so
the access is one of ``a[i]``; any other use of the view (a computed index, arithmetic on it)
leaves the offset unknown, as before.
"""

from __future__ import annotations

import re

from cuda2nki.frontend import ast as A
from cuda2nki.lift.affine import Poly

#: (pointer parameter, element offset, view items per element)
View = tuple[str, Poly, int]


def bits(t: A.CType | None) -> int | None:
    """The width in bits of a scalar type named with it (``int8``, ``uint16``, ``float32``)."""
    if not isinstance(t, A.ScalarType):
        return None
    m = re.search(r"(\d+)$", t.name)
    return int(m.group(1)) if m else None


def view_of(scan, e: A.Expr) -> View | None:
    """The view ``e`` is: a cast of an element's address to a pointer of a narrower scalar, or a
    local holding one."""
    if isinstance(e, A.Name):  # a view while the local still holds what it was set to
        got = scan.__dict__.get("views", {}).get(e.name)
        return got[0] if got is not None and scan.alias.get(e.name) is got[1] else None
    if not (isinstance(e, A.Cast) and isinstance(e.to, A.PointerType)):
        return None
    inner = scan._pointer(e.operand)
    if inner is None or inner[1] is None or inner[2] != 1:
        return None
    base, off, _ = inner
    narrow, wide = bits(e.to.pointee), bits(scan._pointee(base))
    if narrow is None or wide is None or narrow >= wide or wide % narrow:
        return None
    return (base, off, wide // narrow)


def remember(scan, name: str, init: A.Expr | None) -> None:
    """Local pointer ``name`` now holds ``init`` (its alias set already): a view, or none."""
    views = scan.__dict__.setdefault("views", {})
    got = view_of(scan, init) if init is not None else None
    if got is None or name not in scan.alias:
        views.pop(name, None)
    else:
        views[name] = (got, scan.alias[name])


def item(view: View, index: A.Expr | None) -> tuple[str, Poly, int] | None:
    """The element access of ``view[index]`` (``*view`` with no index), when the index is a
    constant inside the element."""
    base, off, per = view
    if index is None:
        return (base, off, 1)
    if isinstance(index, A.IntLit) and 0 <= index.value < per:
        return (base, off, 1)
    return None
