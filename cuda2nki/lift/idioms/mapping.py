"""Elementwise maps: every read and the write use the same element (1-D, 2-D, grid-stride and
vectorised kernels all lift to this)."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import reduces


def is_map(c: N.Compute, k: N.Kernel) -> bool:
    return not reduces(c.expr) and c.accumulate is None
