"""Stencils and convolutions: several reads of one tensor at constant offsets from each other
(halo guards become the domain guard or selects)."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import reads, reduces


def _offset(a: tuple, b: tuple) -> bool:
    """Same index up to a constant: the difference evaluates equal at two points."""
    if len(a) != len(b):
        return False
    names = set()
    for x in a + b:
        names |= x.free_syms()
    try:
        for base in (1, 7):
            env = {n: base + 3 * i for i, n in enumerate(sorted(names))}
            d1 = tuple(x.evaluate(env) - y.evaluate(env) for x, y in zip(a, b))
            env2 = {n: v + 11 for n, v in env.items()}
            d2 = tuple(x.evaluate(env2) - y.evaluate(env2) for x, y in zip(a, b))
            if d1 != d2:
                return False
    except (KeyError, ValueError, ZeroDivisionError, TypeError):
        return False
    return True


def is_window(c: N.Compute, k: N.Kernel) -> bool:
    """A reduction over a window around the output element (``x[i + d]``): a convolution."""
    out_axes = {a.name for a in c.domain.axes}
    for r in reduces(c.expr):
        red = {a.name: a.extent for a in r.axes}
        for rd in reads(r.body):
            for x in rd.index:
                fs = x.free_syms()
                for o in fs & out_axes:
                    for v in fs & set(red):
                        if _overlaps(x, o, v, red[v]):
                            return True
    return False


def _overlaps(x, o: str, v: str, ext) -> bool:
    """Consecutive output elements read overlapping ranges of ``v`` (stride <= span)."""
    names = x.free_syms() | ext.free_syms()
    env = {n: 64 for n in names}
    try:
        e = ext.evaluate(env)
        base = x.evaluate({**env, o: 0, v: 0})
        stride = x.evaluate({**env, o: 1, v: 0}) - base
        span = x.evaluate({**env, o: 0, v: e - 1}) - base
    except (KeyError, ValueError, ZeroDivisionError, TypeError):
        return False
    return 0 < abs(stride) <= abs(span)


def is_stencil(c: N.Compute, k: N.Kernel) -> bool:
    """Neighbour reads of one tensor at constant offsets from each other."""
    axes = {a.name for a in c.domain.axes} | {a.name for r in reduces(c.expr) for a in r.axes}
    by_tensor: dict = {}
    for r in reads(c.expr):
        if any(x.free_syms() & axes for x in r.index):  # neighbours of the iterated element
            by_tensor.setdefault(r.tensor, set()).add(r.index)
    for idxs in by_tensor.values():
        idxs = list(idxs)
        if len(idxs) >= 2 and all(_offset(idxs[0], x) for x in idxs[1:]):
            return True
    return False
