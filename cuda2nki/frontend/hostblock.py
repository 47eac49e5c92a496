"""A launch's block whose sizes the source does not give must still be a block CUDA can launch.

A block size the host reads at run time (a member filled from a file, an option without a
default) takes :data:`~cuda2nki.frontend.hostvalue.DEFAULT_BLOCK` threads, with a note.  Used on
two or three axes (``dim3 block(t, t)``), that default makes 128 x 128 threads, a launch no GPU
(and no check) runs.  The launch is then read again with a smaller default, halved until the
block holds at most 1024 threads, so that the grid computed from the same names agrees with it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from cuda2nki.frontend.hostvalue import DEFAULT_BLOCK, HostFacts

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator

#: threads a block may hold
MAX_BLOCK_THREADS = 1024


def fitted(ev: HostEvaluator, read: Callable[[], HostFacts]) -> HostFacts:
    """``read()`` (the facts of a launch), read again with smaller block defaults while its
    block is too large because of them."""
    facts = read()
    default = DEFAULT_BLOCK
    try:
        while _too_large(facts) and default > 1:
            default //= 2
            ev._block_default = default
            again = read()
            if again.block == facts.block:
                break  # not the block default's doing (a value read from the command line)
            facts = again
    finally:
        ev._block_default = DEFAULT_BLOCK
    return facts


def _too_large(facts: HostFacts) -> bool:
    values = [b.value for b in facts.block]
    if any(not isinstance(v, int) for v in values):
        return False
    defaulted = any("taken" in n for b in facts.block for n in b.notes)
    return defaulted and math.prod(values) > MAX_BLOCK_THREADS  # type: ignore[arg-type]
