"""Launch arguments that point into a buffer: ``stencil<<<g, b>>>(d_in + RADIUS, d_out)``.

The kernel then reads ``in[-RADIUS]``: a valid element of the host buffer, before the pointer it
was given.  The binding says so with ``offset`` (elements from the buffer's start to the pointer
passed) and a ``shape`` that is the buffer's.  ``check`` and the port are both bound to the
buffer itself: the kernel is rebased (:func:`rebase_kernel`), every ``in[e]`` read as
``in[e + offset]`` and every other use of ``in`` as ``in + offset``, so the SIMT run and the port
see the same buffer and in-bounds indices.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.presence import _map

_INT = A.ScalarType(name="int32")


def launch_offsets(fn: A.Function, site: A.LaunchSite | None) -> dict[str, int]:
    """Pointer parameters of ``fn`` launched with a constant element offset into a host buffer
    (``p + c``, ``c + p``, ``&p[c]``; ``c`` a constant expression, > 0)."""
    if site is None or len(site.args) != len(fn.params):
        return {}
    out: dict[str, int] = {}
    for p, arg in zip(fn.params, site.args):
        if not isinstance(p.ty, A.PointerType):
            continue
        off = _offset(arg)
        if off is not None and off > 0:
            out[p.name] = off
    return out


def _offset(e: A.Expr) -> int | None:
    while isinstance(e, A.Cast):
        e = e.operand
    if isinstance(e, A.Binary) and e.op == "+":
        for ptr, amount in ((e.left, e.right), (e.right, e.left)):
            if _is_buffer(ptr):
                return _const(amount)
    if isinstance(e, A.Unary) and e.op == "&" and isinstance(e.operand, A.Index):
        if _is_buffer(e.operand.base):
            return _const(e.operand.index)
    return None


def _is_buffer(e: A.Expr) -> bool:
    while isinstance(e, A.Cast):
        e = e.operand
    return isinstance(e, A.Name) and (e.ty is None or isinstance(e.ty, A.PointerType))


def _const(e: A.Expr) -> int | None:
    """The value of an integer constant expression (macros are already expanded)."""
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.Cast) and isinstance(e.to, A.ScalarType):
        return _const(e.operand)
    if isinstance(e, A.Unary) and e.op in ("-", "+"):
        v = _const(e.operand)
        return None if v is None else (-v if e.op == "-" else v)
    if isinstance(e, A.Binary) and e.op in _OPS:
        a, b = _const(e.left), _const(e.right)
        if a is None or b is None or (e.op in ("/", "%") and b == 0):
            return None
        return _OPS[e.op](a, b)
    return None


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _cdiv,
    "%": lambda a, b: a - _cdiv(a, b) * b,
    "<<": lambda a, b: a << b if 0 <= b < 63 else None,
}


def base_shape(shape: list, offset: int) -> list:
    """The buffer's shape for a view at ``offset`` whose accesses need ``shape``: one flat
    extent, the view's elements plus the offset."""
    flat: int | str
    if all(isinstance(d, int) for d in shape):
        flat = 1
        for d in shape:
            flat *= d
        return [flat + offset]
    flat = " * ".join(f"({d})" if isinstance(d, str) else str(d) for d in shape)
    return [f"{flat} + {offset}"]


def rebase_kernel(fn: A.Function, offsets: Mapping[str, int]) -> A.Function:
    """``fn`` taking each offset parameter as the buffer itself: ``p[e]`` becomes
    ``p[e + off]`` and any other use of ``p`` becomes ``p + off``."""
    if not offsets:
        return fn
    made: set[int] = set()

    def f(n: A.Node) -> A.Node:
        if isinstance(n, A.Name) and n.name in offsets:
            shifted = A.Binary(
                loc=n.loc, ty=n.ty, op="+", left=n, right=_lit(n.loc, offsets[n.name])
            )
            made.add(id(shifted))
            return shifted
        if isinstance(n, A.Index) and id(n.base) in made:
            base = n.base
            assert isinstance(base, A.Binary)
            index = A.Binary(loc=n.index.loc, ty=n.index.ty, op="+", left=n.index, right=base.right)
            return dataclasses.replace(n, base=base.left, index=index)
        return n

    body = _map(fn.body, f)
    return dataclasses.replace(fn, body=body)


def _lit(loc: Any, v: int) -> A.IntLit:
    return A.IntLit(loc=loc, ty=_INT, value=v)


def rebased(tu: A.TranslationUnit, kernel: str, binding: Any) -> A.TranslationUnit:
    """``tu`` with ``kernel`` rebased on the buffers of the binding's ``offset`` tensors."""
    offsets = {t.name: t.offset for t in getattr(binding, "tensors", ()) if t.offset}
    if not offsets:
        return tu
    fns = tuple(rebase_kernel(f, offsets) if f.name == kernel else f for f in tu.functions)
    return dataclasses.replace(tu, functions=fns)
