"""Kernels launched through a function pointer: ``kernel<<<grid, block>>>(...)`` where
``kernel`` is a variable the host sets to one kernel or another.

A benchmark harness often picks the kernel to time through a pointer::

    void (*kernel)(float*, const float*, int);
    switch (which) { case 0: kernel = &copy; break; case 1: kernel = transpose_naive; ... }
    kernel<<<grid, threads>>>(out, in, n);

or keeps the candidates in an array (``fp[0] = deriv_x; fp[1] = deriv_x_pencils;`` then
``fp[i]<<<...>>>``, or ``void (*fp[])(float*) = {a, b};``).  :func:`pointer_targets` lists the
kernels such a launch may call, in source order: every one of them is launched with that
geometry and those arguments, so each gets the launch site.
"""

from __future__ import annotations

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def _txt(n: ts.Node | None) -> str:
    return "" if n is None else (n.text or b"").decode("utf-8", "replace").strip()


def _strip(n: ts.Node | None) -> ts.Node | None:
    """``n`` without casts, parentheses, ``&`` and ``*`` around it."""
    while n is not None:
        if n.type == "cast_expression":
            n = n.child_by_field_name("value")
        elif n.type == "parenthesized_expression":
            kids = _kids(n)
            n = kids[0] if len(kids) == 1 else None
        elif n.type == "pointer_expression":
            n = n.child_by_field_name("argument")
        else:
            return n
    return None


def pointer_base(callee: ts.Node) -> str | None:
    """The variable a launch's callee reads: ``kernel``, ``(*kernel)``, ``fp[i]``, ``fp[d][i]``."""
    n = _strip(callee)
    while n is not None and n.type == "subscript_expression":
        n = _strip(n.child_by_field_name("argument"))
    return _txt(n) if n is not None and n.type == "identifier" else None


def _named_kernel(value: ts.Node | None, kernels: frozenset[str]) -> str | None:
    n = _strip(value)
    if n is None or n.type not in ("identifier", "qualified_identifier"):
        return None
    name = _txt(n).split("::")[-1]
    return name if name in kernels else None


def _assigned_base(left: ts.Node | None) -> str | None:
    n = _strip(left)
    while n is not None and n.type == "subscript_expression":
        n = _strip(n.child_by_field_name("argument"))
    return _txt(n) if n is not None and n.type == "identifier" else None


def _declarator_name(d: ts.Node | None) -> str | None:
    """The name a (possibly function-pointer, array) declarator declares."""
    while d is not None and d.type != "identifier":
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            kids = _kids(d)
            nxt = kids[0] if d.type == "parenthesized_declarator" and kids else None
        d = nxt
    return _txt(d) if d is not None else None


def pointer_targets(scope: ts.Node, base: str, kernels: frozenset[str]) -> list[str]:
    """The kernels assigned to variable ``base`` (or to its items) in ``scope``, in order."""
    out: list[str] = []
    stack = [scope]
    while stack:
        n = stack.pop()
        values: list[ts.Node | None] = []
        if (
            n.type == "assignment_expression"
            and _assigned_base(n.child_by_field_name("left")) == base
        ):
            values.append(n.child_by_field_name("right"))
        elif n.type == "init_declarator" and _declarator_name(n) == base:
            v = n.child_by_field_name("value")
            values += _kids(v) if v is not None and v.type == "initializer_list" else [v]
        for v in values:
            k = _named_kernel(v, kernels)
            if k is not None and k not in out:
                out.append(k)
        stack.extend(reversed(n.children))
    return out


def passed_targets(calls: list[ts.Node], index: int, kernels: frozenset[str]) -> list[str]:
    """The kernels the ``calls`` of a launcher pass as its parameter ``index``, in order."""
    out: list[str] = []
    for call in calls:
        args = call.child_by_field_name("arguments")
        items = _kids(args) if args is not None else []
        k = _named_kernel(items[index], kernels) if index < len(items) else None
        if k is not None and k not in out:
            out.append(k)
    return out
