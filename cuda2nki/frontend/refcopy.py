"""A struct taken by non-const reference that its function never changes: a copy.

``__device__ void store(Params& p, int i, float v) { p.out[i] = v; }`` takes the struct by
reference only to avoid a copy; it writes through a member pointer, never to a member.  Such
a parameter reads the same as ``const Params& p`` (a copy: one variable per member, see
:mod:`cuda2nki.frontend.aggregates`), so a kernel's struct argument, itself one variable per
member, can be passed to it.  A function that assigns a member or the whole struct, increments
one, takes an address inside it or passes the struct on to another call keeps the reference.
"""

from __future__ import annotations

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS

_ASSIGNS = frozenset(("assignment_expression", "update_expression"))


def unchanged_reference(fn_node: ts.Node | None, name: str) -> bool:
    """Whether the function ``fn_node`` only reads the struct parameter ``name`` (its members
    and what its member pointers point to)."""
    body = fn_node.child_by_field_name("body") if fn_node is not None else None
    if body is None:
        return False
    stack = [body]
    while stack:
        n = stack.pop()
        if n.type in _ASSIGNS and _changes(n, name):
            return False
        if n.type == "pointer_expression" and _text(n).startswith("&") and _rooted(n, name):
            return False
        if n.type == "argument_list" and any(_is_name(a, name) for a in _kids(n)):
            return False  # passed on whole: perhaps to a reference that changes it
        stack.extend(n.children)
    return True


def _changes(n: ts.Node, name: str) -> bool:
    """``name = ...``, ``name.m = ...``, ``name.m++``, ``name.inner.m += ...`` (not
    ``name.ptr[i] = ...``, a write to the memory a member points to)."""
    target = n.child_by_field_name("left") or n.child_by_field_name("argument")
    while target is not None and target.type == "parenthesized_expression":
        target = next(iter(_kids(target)), None)
    if target is None:
        return False
    if _is_name(target, name):
        return True
    while target is not None and target.type == "field_expression":
        obj = target.child_by_field_name("argument")
        if _is_name(obj, name) and _text(target.child_by_field_name("operator")) == ".":
            return True
        target = obj
    return False


def _rooted(n: ts.Node, name: str) -> bool:
    """``&name``, ``&name.m``, ``&name.inner.m`` (not ``&name.ptr[i]``)."""
    arg = n.child_by_field_name("argument")
    while arg is not None and arg.type in ("field_expression", "parenthesized_expression"):
        if _is_name(arg, name):
            return True
        arg = arg.child_by_field_name("argument") or next(iter(_kids(arg)), None)
    return _is_name(arg, name)


def _is_name(n: ts.Node | None, name: str) -> bool:
    return n is not None and n.type == "identifier" and _text(n) == name


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def _text(n: ts.Node | None) -> str:
    return "" if n is None else (n.text or b"").decode("utf-8", "replace")
