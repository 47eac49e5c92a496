"""Atomic read-modify-write operations, serialised per address in thread order.

Every thread's operation is applied in ascending thread order (within one chunk of blocks), and
each thread receives the value the address held just before its own operation -- one legal
serialisation of what the hardware does, made deterministic.  Float additions round after every
step in that order (``np.add.accumulate`` is sequential), so conflicting float ``atomicAdd``s give
the sum a GPU could give.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_BIG = 32  # groups larger than this use a per-group ufunc.accumulate


def _groups(idx: np.ndarray):
    order = np.argsort(idx, kind="stable")
    si = idx[order]
    n = len(si)
    if n == 0:
        return order, si, np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, si[1:] != si[:-1]])
    sizes = np.diff(np.r_[starts, n])
    return order, si, starts, sizes


def rmw(
    view: np.ndarray,
    idx: np.ndarray,
    vals: np.ndarray,
    step: Callable,
    accumulate: Callable | None = None,
):
    """Apply ``mem = step(mem, v)`` per thread in order; return the old values (thread order)."""
    n = len(idx)
    old = np.empty(n, dtype=view.dtype)
    if n == 0:
        return old
    order, si, starts, sizes = _groups(idx)
    sv = vals[order]
    old_sorted = np.empty(n, dtype=view.dtype)
    if sizes.max() == 1:
        cur = view[si]
        old_sorted[:] = cur
        view[si] = step(cur, sv)
    else:
        rank = np.arange(n) - np.repeat(starts, sizes)
        handled = np.zeros(n, bool)
        if accumulate is not None:
            for g in np.flatnonzero(sizes > _BIG):
                s, e = starts[g], starts[g] + sizes[g]
                a = si[s]
                seq = np.concatenate([view[a : a + 1], sv[s:e].astype(view.dtype)])
                acc = accumulate(seq)
                old_sorted[s:e] = acc[:-1]
                view[a] = acc[-1]
                handled[s:e] = True
        todo_sizes = (
            np.where(np.add.reduceat(handled, starts) > 0, 0, sizes) if handled.any() else sizes
        )
        for r in range(int(todo_sizes.max()) if len(todo_sizes) else 0):
            pos = starts[todo_sizes > r] + r
            cur = view[si[pos]]
            old_sorted[pos] = cur
            view[si[pos]] = step(cur, sv[pos])
        del rank
    old[order] = old_sorted
    return old


def add_int(view: np.ndarray, idx: np.ndarray, vals: np.ndarray, sign: int = 1):
    """Integer add/sub: exact with wraparound, fully vectorised (segmented prefix sums)."""
    n = len(idx)
    dt = view.dtype
    if n == 0:
        return np.empty(0, dt)
    order, si, starts, sizes = _groups(idx)
    acc_t = np.uint64
    sv = vals[order].astype(np.int64).astype(acc_t)
    if sign < 0:
        sv = (np.uint64(0) - sv).astype(acc_t)
    cs = np.cumsum(sv, dtype=acc_t)
    excl = cs - sv
    base = np.repeat(excl[starts], sizes)
    init = np.repeat(view[si[starts]].astype(np.int64).astype(acc_t), sizes)
    old_sorted = (init + (excl - base)).astype(dt)
    final = (init[starts] + (cs[starts + sizes - 1] - excl[starts])).astype(dt)
    view[si[starts]] = final
    old = np.empty(n, dt)
    old[order] = old_sorted
    return old


def exchange(view: np.ndarray, idx: np.ndarray, vals: np.ndarray):
    n = len(idx)
    dt = view.dtype
    if n == 0:
        return np.empty(0, dt)
    order, si, starts, sizes = _groups(idx)
    sv = vals[order].astype(dt)
    prev = np.empty(n, dt)
    prev[1:] = sv[:-1]
    prev[starts] = view[si[starts]]
    view[si[starts]] = sv[starts + sizes - 1]
    old = np.empty(n, dt)
    old[order] = prev
    return old


def cas(view: np.ndarray, idx: np.ndarray, compare: np.ndarray, vals: np.ndarray):
    both = np.stack(
        [np.broadcast_to(compare, idx.shape), np.broadcast_to(vals, idx.shape)], axis=1
    ).astype(view.dtype)
    # the step needs the compare value of each operation: encode through an index array
    n = len(idx)
    ops = np.arange(n)

    def step(cur, k):
        k = k.astype(np.int64)
        return np.where(cur == both[k, 0], both[k, 1], cur).astype(view.dtype)

    return rmw(view, idx, ops.astype(np.float64), step)


def inc(view, idx, vals, dec: bool = False):
    dt = view.dtype

    def step(cur, v):
        v = v.astype(dt)
        if dec:
            return np.where((cur == 0) | (cur > v), v, cur - dt.type(1)).astype(dt)
        return np.where(cur >= v, dt.type(0), cur + dt.type(1)).astype(dt)

    return rmw(view, idx, vals.astype(dt), step)
