"""The rows of independent work of a block-local sorting network, for partition-use findings.

A kernel that sorts each block's segment of ``n`` keys in shared memory has one row of work per
segment: every key of a segment is compared, through the network, with every other one, so a
segment spread over several partitions needs its exchanges passed between them at every stage.
One segment per partition is the natural layout, and ``size / n`` segments are all the
partitions such a port can use (the lifter has no intent IR for it, so
:mod:`cuda2nki.fidelity.parallelism` cannot say so).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cuda2nki.binding import Resolved
from cuda2nki.fidelity.tracefind import ProblemSize


def segment_length(tu: Any, name: str, binding: Any) -> int | None:
    """Keys per block of a kernel that runs a sorting network, else None."""
    from cuda2nki.lift.sortnet_match import recognise

    net = recognise(tu, name, binding)
    return net.n if net is not None else None


def with_segments(size: ProblemSize, r: Resolved, n: int | None) -> ProblemSize:
    """``size`` with its rows capped at the number of segments of ``n`` keys."""
    if not n:
        return size
    keys = max(int(np.prod(r.shapes[t.name])) for t in r.binding.tensors)
    return dataclasses.replace(size, rows=min(size.rows, max(1, keys // n)))
