"""Grid-wide barriers (``grid.sync()`` of a cooperative launch).

The front end lowers ``cg::this_grid().sync()`` to ``Call("__c2n_grid_sync")`` (see
:mod:`cuda2nki.frontend.gridgroup`).  A cooperative launch keeps every block of the grid resident,
so the barrier orders all memory accesses of the grid.  The interpreter gets that by running a
kernel that contains the barrier (itself or in a device function it calls) as one chunk holding
the whole grid: every statement then completes in every block before the next one starts, and the
barrier is one by construction.  A grid too large for one chunk is refused (C2N1507), as the GPU
refuses a cooperative launch with more blocks than can be resident.  A barrier reached by part of
the grid is reported (C2N1521): on a GPU the grid would hang.
"""

from __future__ import annotations

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.gridgroup import GRID_SYNC
from cuda2nki.frontend.visit import reachable_calls
from cuda2nki.simt.chunk import Chunk

#: the most threads one chunk of a grid-synchronised kernel may hold
MAX_GRID_SYNC_THREADS = 1 << 20  # more than any GPU keeps resident (132 SMs x 2048)
VOID = A.ScalarType(name="void")


def uses_grid_sync(tu: A.TranslationUnit, fn: A.Function) -> bool:
    """Does ``fn``, or a device function it calls (transitively), contain a grid barrier?"""
    return any(c.func == GRID_SYNC for c in reachable_calls(tu, fn))


def _live_per_block(c: Chunk) -> np.ndarray:
    if c._exited is None:
        return np.full(c.nb, c.tpb)
    return c.tpb - np.bincount(c.blk[c.exited], minlength=c.nb)


def _grid_sync(fc, e: A.Call):
    loc = e.loc

    def f(c: Chunk, a):
        if a is None:
            return None
        got = np.bincount(c.blk[a], minlength=c.nb)
        live = _live_per_block(c)
        if np.any(got != live):
            c.launch.warn(
                "C2N1521",
                loc,
                active=int(got.sum()),
                live=int(live.sum()),
                kernel=c.launch.kernel,
            )
        return None

    return f, VOID


def register(reg) -> None:
    reg(
        GRID_SYNC,
        _grid_sync,
        "exact",
        "grid.sync(): the whole grid runs as one chunk in lockstep, so every statement is a "
        "grid-wide barrier; a barrier reached by part of the grid is reported (C2N1521)",
    )
