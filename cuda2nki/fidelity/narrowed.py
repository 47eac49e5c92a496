"""The check of a port of a float64 kernel, which NKI computes in fp32 (:mod:`cuda2nki.fp64`).

The CUDA kernel runs as written, in fp64: its outputs are the reference.  The port receives the
float64 inputs converted to float32 (:func:`cuda2nki.fidelity.points.port_kwargs`) and returns
float32 outputs, which are not a dtype mismatch (C2N4021) for a float64 buffer.  The tolerance
is that of fp32 arithmetic: the IR bound of the kernel's fp32 twin (lifted from the demoted
unit), else the measured difference between the fp64 run and a run of the fp32 twin.  An output
within it that still keeps fewer than four digits of the fp64 result is C2N4030.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np

from cuda2nki import fp64
from cuda2nki.binding import Binding, Resolved
from cuda2nki.diagnostics import Diagnostic, SourceLoc, make


def lift_inputs(tu: Any, b: Binding) -> tuple[Any, Binding]:
    """What the check lifts for its tolerance: the fp32 twin of a float64 kernel (as ``port``
    lifts it), else the kernel itself."""
    return fp64.narrowed(tu, b) if fp64.wide_tensors(b) else (tu, b)


def tolerance_dtype(dtype: str, name: str, wide: Collection[str]) -> str:
    """The dtype whose arithmetic the tolerance of output ``name`` stands for."""
    return fp64.NARROW if name in wide else dtype


def fp32_run(
    tu32: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray]
) -> dict[str, np.ndarray] | None:
    """Outputs of the fp32 twin (``tu32 = demoted(tu)``) on ``arrays`` rounded to float32, or
    None when it cannot run: the fallback tolerance's measure of fp32 rounding."""
    from cuda2nki import simt
    from cuda2nki.diagnostics import DiagnosticError

    narrow = {
        k: (v.astype(np.float32) if v.dtype == np.float64 else v.copy()) for k, v in arrays.items()
    }
    try:
        out = simt.run_kernel(
            tu32,
            name,
            grid=r.grid,
            block=r.block,
            shared_bytes=r.shared_bytes,
            args={**r.scalars, **narrow},
        )
    except (DiagnosticError, KeyError, TypeError, ValueError, NotImplementedError):
        return None
    return {
        t.name: np.asarray(out[t.name], dtype=np.float64).reshape(r.shapes[t.name])
        for t in r.binding.tensors
        if t.role != "in" and t.name in out
    }


def accepted_dtype(name: str, wide: Collection[str], have: np.dtype) -> bool:
    """A float32 output stands for a float64 buffer of a narrowed kernel."""
    return name in wide and np.dtype(have) == np.float32


def shortfall(
    output: str,
    got: np.ndarray,
    expected: np.ndarray,
    dont_care: np.ndarray | None,
    within_bound: bool,
    loc: SourceLoc,
) -> Diagnostic | None:
    """C2N4030 when the fp32 port's ``output`` keeps fewer than four digits of the fp64 result."""
    short = fp64.fp32_shortfall(got, expected, dont_care)
    if short is None:
        return None
    n, total, worst, value = short
    within = (
        "; the port is within the error bound of fp32 arithmetic there, so the loss is fp32's, "
        "not a defect of the port"
        if within_bound
        else ""
    )
    return make(
        "C2N4030",
        loc,
        output=output,
        short=n,
        total=total,
        rtol=f"{fp64.FP32_ENOUGH_RTOL:g}",
        worst=worst,
        value=value,
        within=within,
    )
