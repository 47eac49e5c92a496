"""Transposes and permutations: the value is one read whose index is a non-identity permutation
of the written index (naive and shared-memory tiled transposes lift alike)."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import strip_casts


def is_transpose(c: N.Compute, k: N.Kernel) -> bool:
    e = strip_casts(c.expr)
    if not isinstance(e, N.Read) or c.accumulate is not None:
        return False
    src, dst = e.index, c.target.index
    if len(src) < 2 or sorted(map(repr, src)) != sorted(map(repr, dst)):
        return False
    return tuple(src) != tuple(dst)
