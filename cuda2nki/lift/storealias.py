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

from cuda2nki.lift import affine as af

#: threads of a block the test evaluates at most (a larger block: not judged)
MAX_THREADS = 1024


def collide(stores: Iterable[Any], block: tuple[int, int, int], env: Mapping[str, int]) -> bool:
    """Whether two distinct threads (of one block, or of blocks next to each other) store to the
    same element of a tensor at the sizes ``env`` (see the module docstring)."""
    if block[0] * block[1] * block[2] > MAX_THREADS:
        return False
    for tensor, stores_of in _by_tensor(stores).items():
        del tensor
        seen: dict[int, tuple[int, ...]] = {}
        for thread in _threads(block, _block_axes(stores_of)):
            coords = _coords(thread, block)
            for st in stores_of:
                at = _element(st, {**env, **coords})
                if at is None:
                    continue
                other = seen.setdefault(at, thread)
                if other != thread:
                    return True
    return False


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


def _coords(thread: tuple[int, ...], block: tuple[int, int, int]) -> dict[str, int]:
    bx, by, tx, ty, tz = thread
    blocks, threads = (bx, by, 0), (tx, ty, tz)
    out = {}
    for d in range(3):
        out[af.BLOCK[d]], out[af.THREAD[d]], out[af.BDIM[d]] = blocks[d], threads[d], block[d]
        out[af.GID[d]] = blocks[d] * block[d] + threads[d]
    return out


def _element(st: Any, env: Mapping[str, int]) -> int | None:
    """The element ``st`` stores to in the thread ``env`` (None: it does not store there, or
    the sizes do not say)."""
    try:
        if not af.holds(st.guard, env):
            return None
        return int(st.index.evaluate(env))
    except Exception:  # noqa: BLE001 - an atom the sizes and coordinates do not evaluate
        return None
