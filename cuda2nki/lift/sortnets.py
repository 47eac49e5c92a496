"""Compare-exchange sorting networks over one segment of ``n`` keys (``n`` a power of two).

A network is a list of stages; a stage is a set of comparators ``(lo, hi, up)`` on distinct
positions, all independent of each other (one barrier interval of a CUDA kernel).  A comparator
exchanges ``key[lo]`` and ``key[hi]`` (and the values riding with them) when its predicate holds:
``swap = pred(key[lo], key[hi])``, one predicate for the ascending comparators (``up``) and one for
the descending ones.  A predicate is an IEEE comparison (false whenever a NaN is involved, and
``-0.0 == +0.0``) or its negation, exactly as a CUDA ``if (a > b)`` / ``if (!(a <= b))`` reads.

The families are the networks CUDA kernels build in shared memory: Batcher's bitonic sort (the
direction of a merge taken from bit ``k`` of the position), the bitonic sort whose merges flip
the second half instead (every comparator ascending), and Batcher's odd-even merge sort.  Each
is defined here by the position of every comparator, independently of how a kernel spells it;
which one a kernel runs is decided by running the kernel (:mod:`cuda2nki.lift.sortnet_match`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Comparator = tuple[int, int, bool]
Stage = tuple[Comparator, ...]

#: comparison name -> NumPy spelling (names as nki.language spells them)
COMPARISONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "less": np.less,
    "less_equal": np.less_equal,
}


@dataclass(frozen=True)
class Predicate:
    """``swap = op(key[lo], key[hi])``, negated when ``negate``."""

    op: str
    negate: bool = False

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            got = COMPARISONS[self.op](a, b)
        return ~got if self.negate else got


#: the predicates tried for ascending / descending comparators, the usual spelling first
UP_PREDICATES = tuple(
    Predicate(op, neg)
    for op, neg in (
        ("greater", False),
        ("greater_equal", False),
        ("less_equal", True),
        ("less", True),
    )
)
DOWN_PREDICATES = tuple(
    Predicate(op, neg)
    for op, neg in (
        ("less", False),
        ("less_equal", False),
        ("greater", True),
        ("greater_equal", True),
        ("greater_equal", False),
        ("greater", False),
    )
)


def _pow2(n: int) -> bool:
    return n >= 2 and n & (n - 1) == 0


def bitonic(n: int, ascending: bool = True) -> tuple[Stage, ...]:
    """Batcher's bitonic sort: merge ``k`` compares ``i`` with ``i ^ j``, ascending where bit
    ``k`` of ``i`` is clear (the whole segment in ``ascending`` order at the end)."""
    stages: list[Stage] = []
    k = 2
    while k <= n:
        j = k // 2
        while j > 0:
            stages.append(
                tuple((i, i ^ j, ((i & k) == 0) == ascending) for i in range(n) if (i ^ j) > i)
            )
            j //= 2
        k *= 2
    return tuple(stages)


def bitonic_flip(n: int, ascending: bool = True) -> tuple[Stage, ...]:
    """The bitonic sort whose merge ``k`` first compares ``i`` with its mirror ``i ^ (k - 1)``,
    then half-cleans as usual: every comparator in the one direction."""
    stages: list[Stage] = []
    k = 2
    while k <= n:
        stages.append(tuple((i, i ^ (k - 1), ascending) for i in range(n) if (i ^ (k - 1)) > i))
        j = k // 4
        while j > 0:
            stages.append(tuple((i, i ^ j, ascending) for i in range(n) if (i ^ j) > i))
            j //= 2
        k *= 2
    return tuple(stages)


def bitonic_turned(n: int, ascending: bool = True) -> tuple[Stage, ...]:
    """The bitonic sort whose merges below ``n`` run as in the opposite order's network and
    whose final merge runs in ``ascending`` order (either bitonic half-order merges): the block
    sort at every other block of a global bitonic sort, whose directions come from a bit of the
    global position."""
    rounds = n.bit_length() - 1  # stages of the final merge
    return bitonic(n, not ascending)[:-rounds] + bitonic(n, ascending)[-rounds:]


def odd_even_merge(n: int, ascending: bool = True) -> tuple[Stage, ...]:
    """Batcher's odd-even merge sort: merge ``2p`` compares, at distance ``d = p, p/2, ..., 1``,
    each ``i`` with ``i + d`` where ``i`` starts at ``d % p`` and steps through pairs of ``d``
    runs, keeping the pairs whose ends lie in the same ``2p`` block."""
    stages: list[Stage] = []
    p = 1
    while p < n:
        d = p
        while d > 0:
            stage = [
                (i + j, i + j + d, ascending)
                for j in range(d % p, n - d, 2 * d)
                for i in range(min(d, n - j - d))
                if (i + j) // (2 * p) == (i + j + d) // (2 * p)
            ]
            stages.append(tuple(stage))
            d //= 2
        p *= 2
    return tuple(stages)


#: family name -> network builder
FAMILIES: dict[str, Callable[[int, bool], tuple[Stage, ...]]] = {
    "bitonic": bitonic,
    "bitonic-flip": bitonic_flip,
    "bitonic-turned": bitonic_turned,
    "odd-even-merge": odd_even_merge,
}


def replicated(stages: tuple[Stage, ...], m: int, n: int) -> tuple[Stage, ...]:
    """A network of ``m`` keys run side by side on each ``m``-key chunk of ``n`` keys."""
    return tuple(
        tuple((lo + c * m, hi + c * m, up) for c in range(n // m) for lo, hi, up in stage)
        for stage in stages
    )


def networks(n: int, m: int | None = None) -> list[tuple[str, bool, tuple[Stage, ...]]]:
    """Every candidate network sorting each ``m``-key chunk (all ``n`` keys by default) of
    ``n`` keys: (family, ascending, stages)."""
    m = n if m is None else m
    if not _pow2(n) or not _pow2(m) or m > n:
        return []
    return [
        (name, up, replicated(build(m, up), m, n))
        for name, build in FAMILIES.items()
        for up in (True, False)
    ]


def apply(
    stages: tuple[Stage, ...],
    keys: np.ndarray,
    values: tuple[np.ndarray, ...],
    up: Predicate,
    down: Predicate,
) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Run the network on every row of ``keys`` (segments x n) and the ``values`` riding with
    them; returns new arrays."""
    keys = keys.copy()
    values = tuple(v.copy() for v in values)
    for stage in stages:
        lo = np.array([c[0] for c in stage], dtype=np.int64)
        hi = np.array([c[1] for c in stage], dtype=np.int64)
        asc = np.array([c[2] for c in stage], dtype=bool)
        a, b = keys[:, lo], keys[:, hi]
        swap = np.where(asc[None, :], up(a, b), down(a, b))
        for arr in (keys, *values):
            x, y = arr[:, lo], arr[:, hi]
            arr[:, lo] = np.where(swap, y, x)
            arr[:, hi] = np.where(swap, x, y)
    return keys, values
