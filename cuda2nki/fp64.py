"""float64 kernels on NKI: ported in fp32, judged against the fp64 CUDA results.

NKI has no 64-bit float arithmetic or storage.  A kernel over ``double`` buffers is therefore
ported as the same kernel over ``float`` ones (:func:`cuda2nki.frontend.demote.demoted`): the
port's tensors are declared float32, its callers convert their float64 arrays to float32 on the
way in (``check`` does), and it computes in fp32.  ``port`` says so with warning C2N2516 naming
the tensors and the precision consequence; nothing is narrowed silently.

``check`` runs the CUDA kernel as written (in fp64) and judges the port in two steps:

1. *Is it a faithful fp32 port?*  The tolerance is derived from fp32 arithmetic: the IR bound
   of the demoted kernel (every input rounded to fp32 once, every operation rounding at
   ``u = 2^-24``), or -- when the kernel is not lifted -- the difference between the CUDA
   kernel run in fp64 and the same kernel run with ``double`` replaced by ``float``, widened as
   for any fp64-run tolerance.  An error beyond that is a defect of the port.
2. *Is fp32 enough for this kernel?*  A faithful fp32 port can still be useless where the
   kernel needs fp64 (cancellation, long ill-conditioned sums).  Every element must then agree
   with the fp64 result to :data:`FP32_ENOUGH_RTOL` of the output's magnitude (the larger of
   the element's own and the output's median non-zero magnitude, so that an element that is
   exactly zero by cancellation is measured against the values around it).  An output that
   does not is reported as error C2N4030: the port is as good as fp32 allows, and fp32 is not
   enough.

``FP32_ENOUGH_RTOL = 1e-4`` asks for four significant digits: fp32 carries about seven, so a
well-conditioned kernel (transposes, stencils, short or same-sign sums, GEMMs of moderate
depth) keeps three digits of headroom, while a kernel whose fp32 result has lost more than
three of its seven digits to rounding is one a double-precision user would not accept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from cuda2nki.diagnostics import Diagnostic, SourceLoc, make

#: the dtype NKI lacks, and the one it is computed in instead
WIDE, NARROW = "float64", "float32"
#: an fp32 port of an fp64 kernel must agree with the fp64 results to this fraction of the
#: output's magnitude (see the module docstring)
FP32_ENOUGH_RTOL = 1e-4
#: the unit roundoffs the warning quotes
U32, U64 = 2.0**-24, 2.0**-53


def wide_tensors(binding: Any) -> tuple[str, ...]:
    """The binding's float64 tensors, in parameter order."""
    return tuple(t.name for t in binding.tensors if t.dtype == WIDE)


def narrowed_binding(binding: Any) -> Any:
    """``binding`` with every float64 tensor (and float64 scalar) declared float32."""
    tensors = tuple(
        dataclasses.replace(t, dtype=NARROW) if t.dtype == WIDE else t for t in binding.tensors
    )
    scalars = tuple(
        dataclasses.replace(s, dtype=NARROW) if s.dtype == WIDE else s for s in binding.scalars
    )
    meta = {**binding.meta, "fp64": wide_tensors(binding)}
    return dataclasses.replace(binding, tensors=tensors, scalars=scalars, meta=meta)


def was_wide(binding: Any) -> tuple[str, ...]:
    """The tensors a narrowed binding declared float64 before (empty for any other binding)."""
    return tuple(getattr(binding, "meta", {}).get("fp64", ()))


def narrowed(tu: Any, binding: Any) -> tuple[Any, Any]:
    """The unit and binding of the fp32 kernel a float64 kernel is ported as."""
    from cuda2nki.frontend.demote import demoted

    return demoted(tu), narrowed_binding(binding)


def port_warning(kernel: str, tensors: Sequence[str], loc: SourceLoc) -> Diagnostic:
    """C2N2516: what a port of a float64 kernel changed, and what that costs in accuracy."""
    return make(
        "C2N2516",
        loc,
        kernel=kernel,
        tensors=", ".join(tensors),
        u32=f"{U32:.2g}",
        u64=f"{U64:.2g}",
        rtol=f"{FP32_ENOUGH_RTOL:g}",
    )


def fp32_shortfall(
    got: np.ndarray, expected: np.ndarray, dont_care: np.ndarray | None = None
) -> tuple[int, int, float, float] | None:
    """Where an fp32 result ``got`` falls short of the fp64 ``expected`` by more than
    :data:`FP32_ENOUGH_RTOL` of the magnitude: (elements short, elements compared, worst
    relative error, fp64 value there), or None when every element is close enough."""
    e = np.asarray(expected, dtype=np.float64).ravel()
    g = np.asarray(got, dtype=np.float64).ravel()
    if g.size != e.size:
        return None
    keep = np.isfinite(e) & np.isfinite(g)
    if dont_care is not None and np.size(dont_care) == e.size:
        keep &= ~np.asarray(dont_care, dtype=bool).ravel()
    if not keep.any():
        return None
    e, g = e[keep], g[keep]
    mag = np.abs(e)
    nz = mag[mag > 0]
    scale = float(np.median(nz)) if nz.size else 0.0
    ref = np.maximum(mag, scale)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(ref > 0, np.abs(g - e) / ref, np.where(g == e, 0.0, np.inf))
    short = rel > FP32_ENOUGH_RTOL
    if not short.any():
        return None
    worst = int(np.argmax(rel))
    return int(short.sum()), int(e.size), float(rel[worst]), float(e[worst])
