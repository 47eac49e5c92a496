"""Gathers and scatters: indices computed from data (embedding lookups, index_select; histogram
and scatter-add through atomics)."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import reads, walk


def _dynamic(index: tuple) -> bool:
    return any(isinstance(n, N.Dyn) for x in index for n in walk(x))


def is_gather(c: N.Compute, k: N.Kernel) -> bool:
    return any(_dynamic(r.index) for r in reads(c.expr))


def is_scatter(c: N.Compute, k: N.Kernel) -> bool:
    return _dynamic(c.target.index)
