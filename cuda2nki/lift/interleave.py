"""Interleaved statements: a thread computing several results a constant stride apart (register
blocking: ``C[8*i + r, j]`` for ``r = 0..7``, each its own statement after unrolling) writes one
result per element of a finer axis.  ``K`` statements identical up to ``r + K*a_r`` become one
statement over ``x = r + K*a`` (``x < K * extent(a)``)."""

from __future__ import annotations

import dataclasses

from cuda2nki.ir import nodes as N
from cuda2nki.rewrite import strip_locs, transform


def merge(computes: list) -> list:
    out: list = []
    k = 0
    while k < len(computes):
        merged = None
        for count in range(min(16, len(computes) - k), 1, -1):
            merged = _merge(computes[k : k + count])
            if merged is not None:
                out.append(merged)
                k += count
                break
        if merged is None:
            out.append(computes[k])
            k += 1
    return out


def _merge(group: list) -> N.Compute | None:
    first = group[0]
    if any(not isinstance(c, N.Compute) or c.accumulate is not None for c in group):
        return None
    if any(c.target.tensor != first.target.tensor for c in group):
        return None
    count = len(group)
    for dim in range(len(first.target.index)):
        spots = [_spot(c.target.index[dim], count) for c in group]
        if any(s is None for s in spots) or sorted(s[0] for s in spots) != list(range(count)):
            continue
        fused = [_fine(c, c.target.index[dim], axis, count) for c, (_, axis) in zip(group, spots)]
        if any(f is None for f in fused):
            continue
        fused = [_axis_names(f, fused[0]) for f in fused]
        if any(f is None or _key(f) != _key(fused[0]) for f in fused):
            continue
        x = spots[0][1]
        out = _replace(fused[0], N.Sym(_FINE), N.Sym(x))
        axes = tuple(a.replace(name=x) if a.name == _FINE else a for a in out.domain.axes)
        return out.replace(domain=out.domain.replace(axes=axes))
    return None


_FINE = "fine%"


def _fine(c: N.Compute, pattern, axis: str, count: int) -> N.Compute | None:
    """``c`` with ``r + count*axis`` as one finer axis (None where ``axis`` is used otherwise)."""
    ax = next((a for a in c.domain.axes if a.name == axis), None)
    if ax is None:
        return None
    g = _replace(c, pattern, N.Sym(_FINE))
    if _mentions(g, axis):
        return None
    axes = tuple(
        a.replace(name=_FINE, extent=N.Const(count) * a.extent) if a.name == axis else a
        for a in g.domain.axes
    )
    return g.replace(domain=g.domain.replace(axes=axes))


def _spot(ix, count: int) -> tuple[int, str] | None:
    """``r + count*a`` (or ``count*a``): ``(r, a)``."""
    r = 0
    if isinstance(ix, N.Add) and isinstance(ix.a, N.Const):
        r, ix = ix.a.value, ix.b
    elif isinstance(ix, N.Add) and isinstance(ix.b, N.Const):
        r, ix = ix.b.value, ix.a
    if isinstance(ix, N.Mul) and ix.a == N.Const(count) and isinstance(ix.b, N.Sym):
        return (r, ix.b.name) if 0 <= r < count else None
    if isinstance(ix, N.Mul) and ix.b == N.Const(count) and isinstance(ix.a, N.Sym):
        return (r, ix.a.name) if 0 <= r < count else None
    return None


def _replace(c: N.Compute, pattern, new) -> N.Compute | None:
    return transform(c, lambda x: new if x == pattern else x)


def _mentions(c: N.Compute, name: str) -> bool:
    found = []

    def walk(x):
        if isinstance(x, N.Sym) and x.name == name:
            found.append(x)
        elif isinstance(x, tuple):
            for y in x:
                walk(y)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                if f.name != "loc":
                    walk(getattr(x, f.name))

    walk((c.target, c.expr, c.domain.guard))
    return bool(found)


def _axis_names(c: N.Compute, like: N.Compute) -> N.Compute | None:
    """``c`` with its domain axes (and bound reduction axes) named as in ``like``."""
    if len(c.domain.axes) != len(like.domain.axes):
        return None
    out = c
    for a, b in zip(c.domain.axes, like.domain.axes):
        if a.name != b.name:
            out = _replace(out, N.Sym(a.name), N.Sym(b.name))
            out = out.replace(
                domain=out.domain.replace(
                    axes=tuple(
                        x.replace(name=b.name) if x.name == a.name else x for x in out.domain.axes
                    )
                )
            )
    return out


def _key(c: N.Compute) -> object:
    """``c`` without source locations, its bound reduction axes renamed by position."""
    return strip_locs((c.target, _alpha(c.expr), c.domain))


def _alpha(e):
    """Bound reduction axes renamed by position (two spellings of one reduction compare equal)."""
    counter = [0]

    def walk(x):
        if isinstance(x, N.Reduce):
            new = []
            body, where = x.body, x.where
            for a in x.axes:
                name = f"%r{counter[0]}"
                counter[0] += 1
                body = _sub(body, a.name, name)
                where = _sub(where, a.name, name) if where is not None else None
                new.append(a.replace(name=name))
            return x.replace(
                axes=tuple(new), body=walk(body), where=walk(where) if where is not None else None
            )
        if dataclasses.is_dataclass(x) and not isinstance(x, type) and isinstance(x, N.Expr):
            kw = {}
            for f in dataclasses.fields(x):
                v = getattr(x, f.name)
                if isinstance(v, N.Expr):
                    kw[f.name] = walk(v)
            return dataclasses.replace(x, **kw) if kw else x
        return x

    return walk(e)


def _sub(e, old: str, new: str):
    return transform(e, lambda x: N.Sym(new) if isinstance(x, N.Sym) and x.name == old else x)
