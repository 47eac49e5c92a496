"""Reductions along rows, columns or everything (shared-memory trees, shuffles, atomics and
two-pass kernels all lift to a ``Reduce``, or to an accumulating write)."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import reduces


def is_reduction(c: N.Compute, k: N.Kernel) -> bool:
    return bool(reduces(c.expr)) or c.accumulate is not None


def reduced_axes(c: N.Compute) -> list[str]:
    """Which tensor dims the reductions of ``c`` run over (names of the reduction axes)."""
    return [a.name for r in reduces(c.expr) for a in r.axes]
