"""Legacy multi-core launch grids: ``nl.nc(k)`` and ``nl.spmd_dim``.

``kernel[nl.spmd_dim(4, nl.nc(2)), 2]`` (sugar ``nl.nc(2) * 4`` / ``4 * nl.nc(2)``) spreads the
programs of one grid axis over ``k`` NeuronCores of a logical core (reference 2.1).  Placement
has no effect on what a kernel computes (reference 12): each program still runs once, with
``nl.program_id(axis)`` ranging over the product of the dimension's factors.  What the
simulator keeps is the arithmetic of the launch and its limits: ``k`` is the number of physical
cores in one logical core (1 or 2) and at most one factor of a dimension names cores.
"""

from __future__ import annotations

import math

from cuda2nki.nkisim.engine import no_extra_kw
from cuda2nki.nkisim.errors import invalid

#: physical NeuronCores one logical core spans (trn2 LNC=2)
MAX_CORES = 2


class Cores:
    """``nl.nc(k)``: ``k`` NeuronCores; multiplied by a program count it makes a grid dim."""

    __slots__ = ("count",)

    def __init__(self, count: int):
        self.count = count

    def __mul__(self, other) -> SpmdDim:
        return spmd_dim(self, other)

    def __rmul__(self, other) -> SpmdDim:
        return spmd_dim(other, self)

    def __index__(self) -> int:  # ``kernel[nl.nc(2)]``: one program per core
        return self.count

    __int__ = __index__

    def __repr__(self) -> str:
        return f"nl.nc({self.count})"


class SpmdDim:
    """One launch-grid dimension split over cores; used as an ``int`` it is its program count."""

    __slots__ = ("factors",)

    def __init__(self, factors: tuple[int | Cores, ...]):
        self.factors = factors

    @property
    def size(self) -> int:
        return math.prod(f.count if isinstance(f, Cores) else f for f in self.factors)

    def __index__(self) -> int:
        return self.size

    __int__ = __index__

    def __repr__(self) -> str:
        return f"nl.spmd_dim({', '.join(map(repr, self.factors))})"


def nc(count) -> Cores:
    """``nl.nc(k)``: the ``k`` physical NeuronCores of a logical core (legacy)."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_CORES:
        raise invalid(
            "nl.nc", f"the core count must be an int from 1 to {MAX_CORES}, got {count!r}"
        )
    return Cores(count)


def _factor(x, api: str) -> int | Cores:
    if isinstance(x, Cores):
        return x
    if isinstance(x, bool) or not isinstance(x, int) or x < 1:
        raise invalid(api, f"a grid factor must be a positive int or nl.nc(k), got {x!r}")
    return x


def spmd_dim(*factors, **kw) -> SpmdDim:
    """``nl.spmd_dim(a, b)``: a launch-grid dimension of ``a * b`` programs, one factor of
    which may be ``nl.nc(k)`` (the cores the dimension is spread over)."""
    api = "nl.spmd_dim"
    no_extra_kw(api, kw)
    if len(factors) < 2:
        raise invalid(api, "give the dimension as two or more factors, e.g. (4, nl.nc(2))")
    parts = tuple(_factor(f, api) for f in factors)
    if sum(isinstance(p, Cores) for p in parts) > 1:
        raise invalid(api, "at most one factor of a grid dimension may be nl.nc(k)")
    return SpmdDim(parts)
