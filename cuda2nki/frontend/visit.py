"""Generic traversal of the CUDA AST."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TypeVar

from cuda2nki.frontend import ast as A

N = TypeVar("N", bound=A.Node)

_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    got = _FIELDS.get(cls)
    if got is None:
        got = tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("loc", "ty"))
        _FIELDS[cls] = got
    return got


def walk(node: object) -> Iterator[A.Node]:
    """Every AST node under ``node`` (pre-order, including ``node``); types are not visited."""
    stack: list[object] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (tuple, list)):
            stack.extend(reversed(n))
            continue
        if isinstance(n, A.TranslationUnit):
            stack.extend(reversed((n.globals, n.functions, n.launch_sites)))
            continue
        if not isinstance(n, A.Node):
            continue
        yield n
        kids = [getattr(n, f) for f in _child_fields(type(n))]
        stack.extend(reversed([k for k in kids if isinstance(k, (A.Node, tuple, list))]))


def reachable_calls(tu: A.TranslationUnit, fn: A.Function) -> Iterator[A.Call]:
    """Every call in ``fn`` and in the device functions it calls, transitively (each callee's
    body once)."""
    seen: set[str] = set()
    todo = [fn]
    while todo:
        for n in walk(todo.pop().body):
            if not isinstance(n, A.Call):
                continue
            yield n
            if n.target is not None and n.target not in seen:
                seen.add(n.target)
                callee = tu.function(n.target)
                if callee is not None:
                    todo.append(callee)


def find(node: object, cls: type[N]) -> list[N]:
    """All nodes of class ``cls`` under ``node``, in source order."""
    return [n for n in walk(node) if isinstance(n, cls)]
