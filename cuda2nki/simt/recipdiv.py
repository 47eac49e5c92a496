"""Floating-point division as a port computes it: ``x * (1 / y)``.

NKI has no division instruction the hardware runs (``nl.divide`` is documented as not supported
on the device), so a port divides by multiplying with a reciprocal.  The two agree within an ulp
for ordinary divisors, not at the ends of the float range: the reciprocal of a divisor below
``2**-128`` in magnitude (a subnormal) overflows to infinity, so ``x * (1 / y)`` is ±inf, or NaN
for ``x == 0``, where CUDA's IEEE ``x / y`` is finite; the reciprocal of a divisor above
``2**126`` is itself subnormal and keeps few digits.

:func:`reciprocal_division` runs the interpreter with every floating ``/`` (and ``/=``) computed
that way and records, per division of the source, the divisors met whose reciprocal leaves the
normal range (see :class:`Divisions`).  The check uses it to tell a port that is faithful up to
this documented deviation from one that is wrong (``cuda2nki.fidelity.recipdiv``).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.simt.affine import mat


@dataclass
class Site:
    """What one division of the source met: divisors whose reciprocal leaves the normal range."""

    loc: SourceLoc
    tiny: int = 0  # nonzero divisors whose reciprocal overflows to infinity
    huge: int = 0  # finite divisors whose reciprocal is subnormal
    examples: list[float] = field(default_factory=list)

    def note(self, y: object, dt: np.dtype) -> None:
        fy = np.asarray(y, dtype=dt).ravel()
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            r = np.divide(dt.type(1), fy, dtype=dt)
        tiny = np.isinf(r) & (fy != 0)  # 1/y overflows: y is (nearly) subnormal
        huge = (r != 0) & (np.abs(r) < np.finfo(dt).tiny)  # 1/y is subnormal
        self.tiny += int(np.count_nonzero(tiny))
        self.huge += int(np.count_nonzero(huge))
        for v in fy[tiny | huge][: max(0, 3 - len(self.examples))]:
            self.examples.append(float(v))

    @property
    def met(self) -> bool:
        return bool(self.tiny or self.huge)


@dataclass
class Divisions:
    """The divisions of one run, by source location, in the order first met."""

    sites: dict[tuple[str, int, int], Site] = field(default_factory=dict)

    def site(self, loc: SourceLoc) -> Site:
        key = (loc.file, loc.line, loc.col)
        if key not in self.sites:
            self.sites[key] = Site(loc)
        return self.sites[key]

    def met(self) -> list[Site]:
        """The divisions that met a divisor out of the reciprocal's normal range."""
        return [s for s in self.sites.values() if s.met]


_ACTIVE: contextvars.ContextVar[Divisions | None] = contextvars.ContextVar(
    "cuda2nki_reciprocal_division", default=None
)


@contextlib.contextmanager
def reciprocal_division() -> Iterator[Divisions]:
    """Run the interpreter, inside the block, with ``x / y`` on floats as ``x * (1 / y)``."""
    divisions = Divisions()
    token = _ACTIVE.set(divisions)
    try:
        yield divisions
    finally:
        _ACTIVE.reset(token)


Fn = Callable[..., object]


def divide_fn(exact: Fn, a_: Fn, b_: Fn, dt: np.dtype, loc: SourceLoc) -> Fn:
    """The interpreter's floating ``/`` at ``loc``: ``exact`` (IEEE division) normally, the
    reciprocal product inside :func:`reciprocal_division`."""

    def divide(c, a):
        divisions = _ACTIVE.get()
        if divisions is None:
            return exact(c, a)
        x, y = mat(a_(c, a)), mat(b_(c, a))
        divisions.site(loc).note(y, dt)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
            r = np.divide(dt.type(1), y, dtype=dt)
            return np.multiply(x, r, dtype=dt)

    return divide
