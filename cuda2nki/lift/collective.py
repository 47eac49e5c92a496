"""Warp- and grid-collective calls the lifter does not lift, with the reason said plainly.

A kernel launched from device code is a kernel of its own: the lifter ports kernels one launch
at a time.  ``grid.sync()`` orders two phases of a cooperative kernel; each phase is a kernel of its own for
the lifter, and NKI has no grid-wide barrier.  A wmma fragment is a matrix spread over a warp's
lanes by an unspecified mapping; the lifter does not yet read a warp-matrix loop as a contraction
(the SIMT interpreter runs it, see :mod:`cuda2nki.simt.wmma`).  Both are refused (C2N2010) with
what to do instead.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.coalesced import MASK_REDUCE
from cuda2nki.frontend.gridgroup import GRID_SYNC
from cuda2nki.frontend.wmma import FLOAT_TO_TF32, WMMA_CALLS

_WHY = {
    GRID_SYNC: "a grid-wide barrier (grid.sync()): split the kernel into two launches at this line "
    "and port each",
    FLOAT_TO_TF32: "a warp-matrix (wmma) tf32 conversion: write the product as a plain loop "
    "(the port's matmul runs on the tensor engine)",
}
_WMMA_WHY = (
    "a warp-matrix (wmma) operation: tensor-core fragments are not lifted to a contraction yet; "
    "write the product as a plain or shared-tiled loop nest (the port's matmul runs on the "
    "tensor engine)"
)


def collective_reason(e: A.Expr) -> str | None:
    """Why ``e`` cannot be lifted, for the collectives above; None for other expressions."""
    if isinstance(e, A.Launch):
        return (
            f"a launch of '{e.kernel}' from device code (dynamic parallelism): launch the child "
            "kernel from the host after this one and port each"
        )
    if not isinstance(e, A.Call):
        return None
    if e.func.startswith(MASK_REDUCE):
        return (
            "a reduction over a coalesced or labeled group (lanes chosen by data): reduce over "
            "a fixed tile or the block instead"
        )
    if e.func in WMMA_CALLS:
        return _WMMA_WHY
    return _WHY.get(e.func)
