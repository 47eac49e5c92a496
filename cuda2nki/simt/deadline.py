"""A wall-clock deadline for the interpreter, set by whoever must bound the time of its runs.

A kernel run in the interpreter can take minutes (a grid-stride loop of a few threads over a
large buffer).  A caller with a time budget, such as a batch check sharing what is left of its
file's limit, sets a deadline with :func:`within`; the interpreter looks at the clock every
:data:`EVERY` loop iterations or calls and between chunks of blocks, and past the deadline
raises :class:`Overtime`.  It derives from ``BaseException`` so that no handler of a kernel's
faults (``except DiagnosticError``, ``except Exception``) takes it for a fault of the kernel:
it unwinds to the caller that set the deadline, running every clean-up on the way.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

#: loop iterations or calls between two looks at the clock
EVERY = 1024


class Overtime(BaseException):  # noqa: N818 - not an error of the kernel: the time is up
    """The deadline set by :func:`within` passed while the interpreter ran."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not finish within {seconds:g} s")
        self.seconds = seconds


_end: float | None = None
_seconds = 0.0


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Interpreter runs inside the block end by ``seconds`` from now (None: no deadline; an
    enclosing deadline that ends sooner is kept)."""
    global _end, _seconds
    saved = (_end, _seconds)
    if seconds is not None:
        end = time.monotonic() + seconds
        if _end is None or end < _end:
            _end, _seconds = end, seconds
    try:
        yield
    finally:
        _end, _seconds = saved


def check() -> None:
    """Raise :class:`Overtime` when the deadline has passed."""
    if _end is not None and time.monotonic() > _end:
        raise Overtime(_seconds)
