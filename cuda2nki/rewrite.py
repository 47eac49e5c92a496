"""One generic bottom-up rewriter for trees of frozen dataclasses (the tile IR, the CUDA AST):
every pass and lifting step that rebuilds a tree with a few nodes changed uses it; and one
generic pre-order walk for the passes that only collect from a tree."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any


def transform(node: Any, fn: Callable[[Any], Any], skip: tuple[type, ...] = ()) -> Any:
    """``node`` rebuilt bottom-up: every IR node's fields (not ``loc``) and tuple items first,
    then ``fn`` on the node.  Instances of ``skip`` are left whole; an unchanged subtree is
    returned as the same object."""
    if isinstance(node, skip):
        return node
    if isinstance(node, tuple):
        items = tuple(transform(x, fn, skip) for x in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        if f.name == "loc":
            continue
        old = getattr(node, f.name)
        new = transform(old, fn, skip)
        if new is not old:
            changes[f.name] = new
    return fn(dataclasses.replace(node, **changes) if changes else node)


def strip_locs(node: Any) -> Any:
    """``node`` with every source location set to ``UNKNOWN_LOC`` (to compare two trees by what
    they compute, not by where they were written)."""
    from cuda2nki.diagnostics import UNKNOWN_LOC

    def drop(x: Any) -> Any:
        if getattr(x, "loc", UNKNOWN_LOC) == UNKNOWN_LOC or not dataclasses.is_dataclass(x):
            return x
        return dataclasses.replace(x, loc=UNKNOWN_LOC)

    return transform(node, drop)


def nodes(node: Any, skip: tuple[type, ...] = ()) -> Iterator[Any]:
    """Every dataclass node of ``node`` (items of tuples and lists, fields but ``loc``), in
    pre-order; instances of ``skip`` are yielded but not entered."""
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple | list):
            stack.extend(reversed(x))
        elif hasattr(x, "__dataclass_fields__") and not isinstance(x, type):
            yield x
            if not isinstance(x, skip):
                stack.extend(getattr(x, f) for f in reversed(x.__dataclass_fields__) if f != "loc")
