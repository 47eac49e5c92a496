"""How many rows of independent work a kernel has (from the intent IR), for partition-use findings.

A port can spread a problem over as many partitions as it has independent rows of work.  The
first dimension of the largest tensor overstates that for segmented scans and reductions: a
block-wise prefix sum of 4,096 elements in 256-element blocks has 16 independent segments, and
16 partitions, one segment each, is the natural layout (a segment split over partitions needs a
carry, or a partial result, passed between them).  So the rows of work of one computation are
its parallel domain axes' extents multiplied together, times, for each scan or reduction axis,
the number of :data:`SEGMENT_ROW`-element pieces it holds (a long segment can be split into
pieces on several partitions, and an expert port does so).
"""

from __future__ import annotations

from collections.abc import Mapping

from cuda2nki.fidelity.intensity import reductions
from cuda2nki.ir.nodes import Axis, Compute, Kernel
from cuda2nki.ir.ops import AxisKind

# elements of one segment that one partition row takes in one engine instruction before splitting
# the segment pays off (C2N5008 also looks at instructions of fewer than this many per partition)
SEGMENT_ROW = 512


def work_rows(kernel: Kernel | None, scalars: Mapping[str, int | float]) -> int | None:
    """The most rows of independent work among the kernel's computations; ``None`` when the
    kernel is not an intent of computations or an extent cannot be evaluated."""
    if kernel is None or not kernel.body:
        return None
    env = {k: int(v) for k, v in scalars.items() if float(v).is_integer()}
    best = 0
    for c in kernel.body:
        if not isinstance(c, Compute):
            return None
        try:
            best = max(best, _rows(c, env))
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            return None
    return best


def _rows(c: Compute, env: dict[str, int]) -> int:
    rows = 1
    for a in c.domain.axes:
        rows *= _extent(a, env) if a.kind is AxisKind.PARALLEL else _pieces(a, env)
    split = 1
    for red in reductions(c.expr):  # the reduction that can be split the most
        pieces = 1
        for a in red.axes:
            pieces *= _pieces(a, env)
        split = max(split, pieces)
    return rows * split


def _extent(a: Axis, env: dict[str, int]) -> int:
    return max(0, int(a.extent.evaluate(env)))


def _pieces(a: Axis, env: dict[str, int]) -> int:
    return max(1, -(-_extent(a, env) // SEGMENT_ROW))
