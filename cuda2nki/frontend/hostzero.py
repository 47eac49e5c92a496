"""Buffers the host zeroes right before a launch: ``cudaMemset(d_count, 0, sizeof(int));
kernel<<<g, b>>>(..., d_count, ...)``.

A counter that a kernel takes slots from starts where the host put it, and hosts zero it before
every launch.  :func:`zeroed_before` says whether the last thing the launching function does to
the buffer an argument passes, before the launch in source order, is a ``cudaMemset`` (or
``cudaMemsetAsync``, ``memset``) to zero: a copy into it, a non-zero fill or another launch
that takes it in between means no.  Buffers reached through a launcher's parameters are not
followed (the answer is then no).
"""

from __future__ import annotations

import functools

import tree_sitter as ts

from cuda2nki.frontend.hostalloc import _args, _callee, _pointer_name, _strip, _walk
from cuda2nki.frontend.hostsyntax import _enclosing

_FILLS = frozenset({"cudaMemset", "cudaMemsetAsync", "memset", "cuMemsetD32", "cuMemsetD8"})
_COPIES = frozenset(
    {"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpyToSymbol", "memcpy", "cudaMemcpy2D"}
)


def _is_zero(n: ts.Node) -> bool:
    n = _strip(n)
    text = n.text.decode("utf-8", "replace") if n.text else ""
    return n.type in ("number_literal", "char_literal") and text in ("0", "0x0", "0x00", "'\\0'")


def _effect(n: ts.Node, name: str) -> str | None:
    """What the call ``n`` does to buffer ``name``: "zero", "write", or None (nothing)."""
    if n.type == "call_expression" and b"<<<" in (n.text or b""):  # another launch
        names = {_pointer_name(a) for a in _args(n)}
        return "write" if name in names else None
    if n.type != "call_expression":
        return None
    callee, items = _callee(n), _args(n)
    if not items or _pointer_name(items[0]) != name:
        return None
    if callee in _FILLS:
        return "zero" if len(items) >= 2 and _is_zero(items[1]) else "write"
    if callee in _COPIES:
        return "write"
    return None


def zeroed_before(arg: ts.Node, call: ts.Node) -> bool:
    """Is the buffer ``arg`` passes at the launch ``call`` filled with zeros by the launching
    function right before it (see the module doc)?"""
    name = _pointer_name(arg)
    fnode = _enclosing(call)
    if name is None or fnode is None:
        return False
    last: tuple[int, str] | None = None
    for n in _calls_in(fnode):
        if n.end_byte > call.start_byte:
            continue
        effect = _effect(n, name)
        if effect is not None and (last is None or n.start_byte > last[0]):
            last = (n.start_byte, effect)
    return last is not None and last[1] == "zero"


@functools.lru_cache(maxsize=64)
def _calls_in(fnode: ts.Node) -> tuple[ts.Node, ...]:
    """The calls of the host function ``fnode`` in source (pre-)order, listed once for all the
    buffers of its launches."""
    return tuple(n for n in _walk(fnode) if n.type == "call_expression")
