"""Whether a kernel's threads store to the same element at given sizes.

A size that strides a thread's rows (``w[(hid + 1) * ty + tx]`` for a 16 x 16 block) keeps every
thread's element its own only while the stride covers the inner index: at the host's size
(``hid = 16``) each thread writes its own element, halved to a simulable test size (``hid = 8``)
two threads write the same one, the kernel races, and a check at that size compares two
arbitrary orders.  :func:`cuda2nki.lift.infer._shrink` keeps a size where halving it would make
threads that stored apart collide (:func:`collide`).

The test evaluates each store the one symbolically executed thread makes (its index and guard,
affine in the thread and block coordinates and the sizes) for every thread of one block and of
its neighbours along each grid axis; a store in a loop, an accumulation (an atomic: colliding is
its purpose) or one whose index the sizes do not evaluate is not judged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import product
from typing import Any

import numpy as np

from cuda2nki.lift import affine as af

#: threads of a block the test evaluates at most (a larger block: not judged)
MAX_THREADS = 1024


def collide(stores: Iterable[Any], block: tuple[int, int, int], env: Mapping[str, int]) -> bool:
    """Whether two distinct threads (of one block, or of blocks next to each other) store to the
    same element of a tensor at the sizes ``env`` (see the module docstring).  All threads are
    evaluated at once, on arrays of their coordinates."""
    if block[0] * block[1] * block[2] > MAX_THREADS:
        return False
    for stores_of in _by_tensor(stores).values():
        threads = np.array(list(_threads(block, _block_axes(stores_of))), dtype=np.int64)
        coords = {**env, **_coord_arrays(threads, block)}
        ids = np.arange(len(threads), dtype=np.int64)
        elems, owners = [], []
        for st in stores_of:
            at = _elements(st, coords, len(threads))
            if at is None:
                continue
            where, element = at
            elems.append(element[where])
            owners.append(ids[where])
        if elems and _shared_element(np.concatenate(elems), np.concatenate(owners)):
            return True
    return False


def _shared_element(elems: np.ndarray, owners: np.ndarray) -> bool:
    """Whether some element is stored by two distinct threads."""
    pairs = np.unique(np.stack([elems, owners]), axis=1)
    _, counts = np.unique(pairs[0], return_counts=True)
    return bool((counts > 1).any())


def _coord_arrays(threads: np.ndarray, block: tuple[int, int, int]) -> dict[str, Any]:
    bx, by, tx, ty, tz = threads.T
    zero = np.zeros_like(bx)
    blocks, ts = (bx, by, zero), (tx, ty, tz)
    out: dict[str, Any] = {}
    for d in range(3):
        out[af.BLOCK[d]], out[af.THREAD[d]], out[af.BDIM[d]] = blocks[d], ts[d], block[d]
        out[af.GID[d]] = blocks[d] * block[d] + ts[d]
    return out


def _elements(st: Any, env: Mapping[str, Any], n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(threads that store, element each thread stores to) of ``st``, on arrays of ``n``
    threads; None when the sizes do not evaluate the store (it is not judged)."""
    try:
        with np.errstate(all="raise"):
            where = np.broadcast_to(_holds(st.guard, env), (n,))
            element = np.broadcast_to(_value(st.index, env), (n,))
    except (KeyError, ZeroDivisionError, FloatingPointError, OverflowError, TypeError):
        return None
    return where, element


def _value(p: af.Poly, env: Mapping[str, Any]) -> Any:
    total: Any = 0
    for m, c in p.terms:
        v: Any = c
        for a in m:
            v = v * _atom(a, env)
        total = total + v
    return total


def _atom(a: Any, env: Mapping[str, Any]) -> Any:
    if isinstance(a, af.DivAtom | af.ModAtom):
        n, d = _value(a.num, env), _value(a.den, env)
        if np.any(np.asarray(d) == 0):
            raise ZeroDivisionError("division by zero in index expression")
        q = np.abs(n) // np.abs(d) * np.where((np.asarray(n) >= 0) == (np.asarray(d) > 0), 1, -1)
        return q if isinstance(a, af.DivAtom) else n - q * d
    if isinstance(a, af.OpaqueAtom):
        raise KeyError(a.key)
    return env[a]


def _holds(c: af.Cond, env: Mapping[str, Any]) -> Any:
    if c.kind == "true":
        return True
    if c.kind == "false":
        return False
    if c.kind == "cmp":
        v = np.asarray(_value(c.cmp.poly, env))
        return v < 0 if c.cmp.op == "<" else (v == 0) == (c.cmp.op == "==")
    if c.kind == "and":
        out: Any = True
        for a in c.args:
            out = np.logical_and(out, _holds(a, env))
        return out
    if c.kind == "or":
        out = False
        for a in c.args:
            out = np.logical_or(out, _holds(a, env))
        return out
    raise ValueError(c.kind)


def _by_tensor(stores: Iterable[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for st in stores:
        if st.loops or st.accumulate is not None:
            continue
        out.setdefault(st.tensor, []).append(st)
    return out


def _block_axes(stores: list[Any]) -> set[int]:
    """The grid axes (0: x, 1: y) the stores' indices follow: a block's neighbour along another
    axis stores where it does (the grid has one block there, or the kernel races at any size)."""
    names = {str(a) for st in stores for a in st.index.atoms()}
    return {d for d in (0, 1) if af.BLOCK[d] in names or af.GID[d] in names}


def _threads(block: tuple[int, int, int], axes: set[int]) -> Iterable[tuple[int, ...]]:
    """(block x, block y, thread x, thread y, thread z) of the threads of block (0, 0) and of
    its neighbours (1, 0) and (0, 1) along the grid ``axes``."""
    neighbours = [(0, 0)] + [(1, 0)] * (0 in axes) + [(0, 1)] * (1 in axes)
    for bx, by in neighbours:
        for tz, ty, tx in product(range(block[2]), range(block[1]), range(block[0])):
            yield (bx, by, tx, ty, tz)
