"""Structural queries over intent expressions shared by the recognisers."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from cuda2nki.ir import nodes as N


def walk(x: object) -> Iterator[object]:
    """Every node below ``x`` (expressions and sizes; a tuple of them), preorder."""
    if isinstance(x, tuple):
        for y in x:
            yield from walk(y)
        return
    yield x
    if dataclasses.is_dataclass(x):
        for f in dataclasses.fields(x):
            v = getattr(x, f.name)
            if isinstance(v, tuple):
                for y in v:
                    if dataclasses.is_dataclass(y):
                        yield from walk(y)
            elif dataclasses.is_dataclass(v):
                yield from walk(v)


def reads(x: object) -> list[N.Read]:
    return [n for n in walk(x) if isinstance(n, N.Read)]


def reduces(x: object) -> list[N.Reduce]:
    return [n for n in walk(x) if isinstance(n, N.Reduce)]


def ops(x: object) -> set:
    out = set()
    for n in walk(x):
        if isinstance(n, (N.Unary, N.Binary)):
            out.add(str(n.op))
    return out


def syms(x: object) -> set[str]:
    return {n.name for n in walk(x) if isinstance(n, N.Sym)}


def strip_casts(e: N.Expr) -> N.Expr:
    while isinstance(e, N.Cast):
        e = e.x
    return e


def axis_names(c: N.Compute) -> list[str]:
    return [a.name for a in c.domain.axes]
