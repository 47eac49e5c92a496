"""Pointer extents read from a kernel's syntax, for binding inference where symbolic execution
gives up (shared memory, warp collectives, loops it cannot fold).

The kernel body is walked once, in order.  Integer locals and loop variables become atoms with an
exclusive upper bound; every global access ``p[e]`` (also through a pointer local such as
``const float* x = inp + row * C``, ``*(p + e)``, ``&p[e]`` handed to an intrinsic, or a cast to a
vector pointer) records its flat offset as a :class:`~cuda2nki.lift.affine.Poly`.  Bounds come
from, in order of preference:

* guards: ``if (i < n) {...}``, ``if (i >= n) return;`` (also ``<=``, ``>``, ``&&``);
* loops: ``for (int i = s; i < n; i += step)`` (grid-stride loops included: ``i < n``);
* the launch geometry: ``threadIdx.d < block.d``, ``blockIdx.d < grid.d``, and a global index
  ``blockIdx.d * blockDim.d + threadIdx.d < X`` when the grid is ``ceil_div(X, block.d)``.  A bound
  taken from the launch rather than a guard is a guess about the host's sizes, so the extent
  carries a note saying so.

The largest offset plus one is the extent, a polynomial in the kernel's scalar parameters.  A
product of parameters (and constants) becomes an N-D row-major shape, outermost first
(``b * T * C + t * C + c`` with ``b < B``, ``t < T``, ``c < C`` is ``[B, T, C]``); other
polynomials stay one flat dimension.
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift.dataindex import data_extents
from cuda2nki.lift.datatie import tied_extents
from cuda2nki.lift.extentaccess import Extent
from cuda2nki.lift.extentscan import _Scan
from cuda2nki.lift.extentsyntax import in_scalars

__all__ = ["Extent", "extents", "in_scalars"]


def extents(
    fn: A.Function,
    launch: dict | None,
    ties: dict | None = None,
    callees: Callable[[str, int], str] | None = None,
    device: Callable[[str], A.Function | None] | None = None,
) -> dict[str, Extent]:
    """Pointer parameter -> :class:`Extent` from the syntax of ``fn`` under ``launch`` (the
    inferred ``{"grid": [...], "block": [...]}`` in parameter names, or None), with the sizes
    ``ties`` names read as the sizes they are tied to.  ``callees(function, i)``: what a device
    function does through its ``i``-th parameter (``"r"``, ``"w"``, ``"rw"``; see
    :mod:`cuda2nki.lift.calleeroles`); without it, a pointer passed to one is read.
    ``device(name)``: the device function of that name, whose body is then scanned where the
    kernel calls it (:mod:`cuda2nki.lift.extentinline`)."""

    def fresh() -> _Scan:
        scan = _Scan(fn, launch, ties)
        if callees is not None:
            scan.callees = callees
        scan.device = device
        return scan

    try:
        scan = fresh()
        scan.run()
    except (af.BudgetExceeded, RecursionError):
        return {}
    found = scan.extents()
    data = data_extents(fresh(), found)  # offsets through loaded index data
    return {**found, **data, **tied_extents(scan, found)}  # and data-free ones (lift.datatie)
