"""Prefix scans: the value at a position combines everything before it along an axis (block
scans through shared memory lift to a ``scan``)."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import walk


def is_scan(c: N.Compute, k: N.Kernel) -> bool:
    return any(isinstance(n, N.Scan) for n in walk(c.expr))
