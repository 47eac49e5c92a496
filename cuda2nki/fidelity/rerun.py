"""The CUDA kernel run again under another reading of its semantics, for a check that explains a
mismatch: blocks one at a time (:mod:`cuda2nki.fidelity.blockorder`), never-written memory as
zeros (:mod:`cuda2nki.fidelity.uninit`), divisions as reciprocals
(:mod:`cuda2nki.fidelity.recipdiv`).  Each output comes back with the elements the run never
wrote (they hold zero), so the comparison leaves them out as for the first run."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuda2nki.binding import Resolved
from cuda2nki.diagnostics import DiagnosticError, SourceLoc
from cuda2nki.nkisim.dtypes import CANARY_F32, canary_mask

#: per output: (values, mask of the elements never written)
Outputs = dict[str, tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Run:
    """One launch of the check: the kernel, its resolved point and inputs, and the port's file
    and line (where a finding about the port points)."""

    tu: Any
    name: str
    r: Resolved
    arrays: dict[str, np.ndarray]
    loc: SourceLoc


def changed(first: np.ndarray, again: np.ndarray) -> np.ndarray:
    """Where two runs of the kernel give different values (NaN equals NaN)."""
    return ~((first == again) | (np.isnan(first) & np.isnan(again)))


def rerun(
    tu: Any,
    name: str,
    r: Resolved,
    arrays: dict[str, np.ndarray],
    mode: contextlib.AbstractContextManager | None = None,
    entered: list | None = None,
    **options: Any,
) -> Outputs | None:
    """The outputs of kernel ``name`` run on ``arrays`` at ``r`` with the interpreter's
    ``options`` (``run_kernel_full`` keywords), inside ``mode`` when given (what entering it
    gives is appended to ``entered``); None when the run fails."""
    from cuda2nki.simt.runner import run_kernel_full

    args: dict[str, Any] = {**r.scalars, **{k: v.copy() for k, v in arrays.items()}}
    for t in r.binding.tensors:
        if t.role == "out" and args[t.name].dtype == np.float32:
            args[t.name].fill(CANARY_F32)
    try:
        with mode if mode is not None else contextlib.nullcontext() as got:
            if entered is not None:
                entered.append(got)
            res = run_kernel_full(
                tu,
                name,
                grid=r.grid,
                block=r.block,
                shared_bytes=r.shared_bytes,
                args=args,
                **options,
            )
    except DiagnosticError:
        return None
    out: Outputs = {}
    for t in r.binding.tensors:
        if t.role == "in":
            continue
        a = np.asarray(res.outputs[t.name]).reshape(r.shapes[t.name])
        mask = canary_mask(a)
        if mask.any():
            a = a.copy()
            a[mask] = 0.0
        out[t.name] = (a, mask)
    return out
