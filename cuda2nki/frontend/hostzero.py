"""Buffers the host zeroes right before a launch: ``cudaMemset(d_count, 0, sizeof(int));
kernel<<<g, b>>>(..., d_count, ...)``.

A counter that a kernel takes slots from starts where the host put it, and hosts zero it before
every launch.  :func:`zeroed_before` says whether the last thing the host does to the buffer an
argument passes, before the launch in source order, zeroes it:

* a fill with zero (``cudaMemset``, ``cudaMemsetAsync``, ``memset``...);
* a copy into it (``cudaMemcpy``/``cudaMemcpyAsync``) from a host zero: ``&z`` of a scalar whose
  last store before the copy is 0 (``int z = 0;``), or a host buffer whose last store is ``*h =
  0`` / ``h[0] = 0`` (a copy of one element) or a zero fill / an all-zero initializer list;
* nothing in the launching function, when the buffer is one of its parameters: then the same
  question at every call of it in the file, before the call (a launcher whose caller zeroes the
  counter), several levels deep.

A copy of anything else, a non-zero fill, another launch that takes the buffer, or a call of a
function of the file that takes it (which may launch) in between means no.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend.hostalloc import (
    _address_of,
    _args,
    _callee,
    _pointer_name,
    _strip,
    _txt_of,
    nodes_naming,
)
from cuda2nki.frontend.hostsyntax import _enclosing, _function_name, _params

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator

_FILLS = frozenset({"cudaMemset", "cudaMemsetAsync", "memset", "cuMemsetD32", "cuMemsetD8"})
_COPIES = frozenset({"cudaMemcpy", "cudaMemcpyAsync", "memcpy", "cudaMemcpy2D"})
_OTHER_COPIES = frozenset({"cudaMemcpyToSymbol"})
_MAX_CALLERS = 6  # launcher levels followed into their callers
#: nodes that may store into a host variable (statements and expressions)
_HOST_STORES = frozenset(
    {"init_declarator", "assignment_expression", "update_expression", "call_expression"}
)


def _is_zero(n: ts.Node) -> bool:
    n = _strip(n)
    text = n.text.decode("utf-8", "replace") if n.text else ""
    if n.type == "initializer_list":  # ``{0}``, ``{}``, ``{0, 0}``: every element zero
        return all(_is_zero(c) for c in n.named_children if c.type != "comment")
    return n.type in ("number_literal", "char_literal") and text.lower().rstrip("uflz") in (
        "0",
        "0x0",
        "0x00",
        "'\\0'",
        "0.",
        "0.0",
    )


def _is_launch(n: ts.Node) -> bool:
    return n.type == "call_expression" and b"<<<" in (n.text or b"")


def _effect(ev: HostEvaluator, n: ts.Node, name: str) -> str | None:
    """What the call ``n`` does to buffer ``name``: "zero", "write", or None (nothing)."""
    if n.type != "call_expression":
        return None
    items = _args(n)
    names = {_pointer_name(a) for a in items}
    if _is_launch(n):  # another launch
        return "write" if name in names else None
    callee = _callee(n)
    if callee in _FILLS or callee in _COPIES or callee in _OTHER_COPIES:
        if not items or _pointer_name(items[0]) != name:
            return None
        if callee in _FILLS:
            return "zero" if len(items) >= 2 and _is_zero(items[1]) else "write"
        if callee in _COPIES and len(items) >= 3 and _host_zero(ev, n, items[1], items[2]):
            return "zero"
        return "write"
    if name in names and ev.functions(callee):  # a function of the file: it may launch
        return "write"
    return None


def _single(size: ts.Node) -> bool:
    """Is the byte count ``size`` one element (``sizeof(int)``, ``sizeof(*h)``, ``4``)?"""
    s = _strip(size)
    if s.type == "sizeof_expression":
        return True
    return s.type == "number_literal" and _txt_of(s) in ("4", "8", "2", "1")


def _stores(fnode: ts.Node, before: int) -> Iterator[ts.Node]:
    stack = [fnode]
    while stack:
        n = stack.pop()
        if n.start_byte >= before:
            continue
        if n.type in _HOST_STORES:
            yield n
        stack.extend(n.children)


def _store(n: ts.Node, name: str, scalar: bool) -> str | None:
    """What ``n`` stores in host variable ``name`` (``scalar``: ``name`` itself, else the
    buffer ``name`` points at): "zero" (the whole buffer, or its first element: "first"),
    "write", or None (nothing)."""
    if n.type == "init_declarator":
        d = n.child_by_field_name("declarator")
        while d is not None and d.type not in ("identifier",):
            d = d.child_by_field_name("declarator")
        if d is None or _txt_of(d) != name:
            return None
        value = n.child_by_field_name("value")
        if value is None or (not scalar and value.type != "initializer_list"):
            return "write"  # ``T* h = 0`` is a null pointer, not a zero element
        return "zero" if _is_zero(value) else "write"
    if n.type == "update_expression":
        return (
            "write"
            if name in _txt_of(n) and _root(n.child_by_field_name("argument")) == name
            else None
        )
    if n.type == "assignment_expression":
        left = n.child_by_field_name("left")
        if left is None or _root(left) != name:
            return None
        op = n.child_by_field_name("operator")
        right = n.child_by_field_name("right")
        plain = op is not None and op.text == b"=" and right is not None and _is_zero(right)
        left = _strip(left)
        if scalar:
            return "zero" if plain and left.type == "identifier" else "write"
        first = left.type == "pointer_expression" or (
            left.type == "subscript_expression" and _first_index(left)
        )
        return "first" if plain and first else "write"
    items = _args(n)
    if n.type != "call_expression" or not any(_root(a) == name for a in items):
        return None
    if not scalar and _callee(n) in ("memset", "cudaMemset") and _pointer_name(items[0]) == name:
        return "zero" if len(items) >= 2 and _is_zero(items[1]) else "write"
    return "write"


def _first_index(sub: ts.Node) -> bool:
    idx = sub.child_by_field_name("index") or sub.child_by_field_name("indices")
    if idx is not None and idx.type == "subscript_argument_list":
        kids = [c for c in idx.named_children if c.type != "comment"]
        idx = kids[0] if len(kids) == 1 else None
    return idx is not None and _is_zero(idx)


def _root(n: ts.Node | None) -> str | None:
    """The variable ``n`` names or reaches through ``&``, ``*`` and subscripts."""
    while n is not None:
        n = _strip(n)
        if n.type == "identifier":
            return _txt_of(n)
        if n.type == "pointer_expression":
            n = n.child_by_field_name("argument")
        elif n.type == "subscript_expression":
            n = n.child_by_field_name("argument")
        else:
            return None
    return None


def _host_zero(ev: HostEvaluator, copy: ts.Node, src: ts.Node, size: ts.Node) -> bool:
    """Does the copy ``copy`` of ``size`` bytes read zeros from host ``src`` (``&z`` of a zero
    scalar, or a buffer zeroed as a whole or, for a one-element copy, in its first element)?"""
    fnode = _enclosing(copy)
    scalar = _address_of(src)
    name = scalar or _pointer_name(src)
    if name is None or fnode is None:
        return False
    last: tuple[int, str] | None = None
    for n in _stores(fnode, copy.start_byte):
        what = _store(n, name, scalar is not None)
        if what is not None and (last is None or n.start_byte > last[0]):
            last = (n.start_byte, what)
    if last is None:
        return False
    return last[1] == "zero" or (last[1] == "first" and _single(size))


def _last_effect(ev: HostEvaluator, fnode: ts.Node, name: str, call: ts.Node) -> str | None:
    last: tuple[int, str] | None = None
    for n in nodes_naming(ev, fnode, name):
        if n.end_byte > call.start_byte:
            continue
        effect = _effect(ev, n, name)
        if effect is not None and (last is None or n.start_byte > last[0]):
            last = (n.start_byte, effect)
    return None if last is None else last[1]


def zeroed_before(
    ev: HostEvaluator, arg: ts.Node, call: ts.Node, seen: frozenset[int] = frozenset()
) -> bool:
    """Is the buffer ``arg`` passes at the launch (or launcher call) ``call`` zeroed by the host
    right before it (see the module doc)?  ``seen``: the launchers being followed (a recursive
    one is not zeroed)."""
    name = _pointer_name(arg)
    fnode = _enclosing(call)
    if name is None or fnode is None:
        return False
    last = _last_effect(ev, fnode, name, call)
    if last is not None:
        return last == "zero"
    params = _params(fnode)
    fname = _function_name(fnode)
    if name not in params or fname is None or len(seen) >= _MAX_CALLERS:
        return False
    if fnode.start_byte in seen:
        return False
    idx, inner = params.index(name), seen | {fnode.start_byte}
    callers = [c for c in ev.calls(fname) if _enclosing(c) is not fnode and not _is_launch(c)]
    return bool(callers) and all(
        idx < len(_args(c)) and zeroed_before(ev, _args(c)[idx], c, inner) for c in callers
    )
