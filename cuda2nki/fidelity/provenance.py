"""Provenance: every element of a port's outputs must come from a traced NKI instruction.

An output the kernel returned as a host array, values in outputs of a kernel that issued no
instruction, or (where the simulator tracked the store behind each element) a value no store
wrote, fail the port with C2N4022.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cuda2nki.diagnostics import Diagnostic, SourceLoc, make
from cuda2nki.nkisim.dtypes import canary_mask


def findings(results: list[dict[str, Any]], pb: Any, info: Any) -> list[Diagnostic]:
    """C2N4022 for outputs no traced instruction wrote: host arrays the kernel returned, or
    values in its outputs although it issued no instruction at all (an output left unwritten is
    the comparison's C2N4003, not this)."""
    entry = next((e for e in results if e.get("status") == "ok"), None)
    if entry is None:
        return []
    if entry.get("host_outputs"):
        evidence = "it returned host arrays: " + ", ".join(entry["host_outputs"])
    elif entry.get("instructions", 1) == 0 and has_values(entry.get("outputs")):
        evidence = "the kernel issued no NKI instruction, yet its outputs hold values"
    else:
        evidence = unstored_values(results)
        if not evidence:
            return []
    out = ", ".join(pb.outputs) or "*"
    return [make("C2N4022", SourceLoc(info.path, info.line, 1), output=out, evidence=evidence)]


#: a writer map's entry for an element no store wrote (``nkisim.provenance.UNSTORED``)
UNSTORED = -1


def unstored_values(results: list[dict[str, Any]]) -> str:
    """Where the simulator tracked which store wrote each output element: float32 elements that
    hold a value although no store wrote them (the canary NaN is gone), e.g. set from the host
    through the simulator's internals."""
    for e in results:
        w = e.get("writers") if e.get("status") == "ok" else None
        if w is None:
            continue
        outs = e.get("outputs")
        arrays = list(outs.values()) if isinstance(outs, Mapping) else list(outs or ())
        for i, m in enumerate(w.maps):
            if m is None or i >= len(arrays):
                continue
            a = np.asarray(arrays[i])
            if a.dtype != np.float32 or a.size != m.size:
                continue
            loose = (m.reshape(a.shape) == UNSTORED) & ~canary_mask(a)
            if loose.any():
                return (
                    f"{int(loose.sum())} of {a.size} elements of output {i} hold values that no "
                    "store of the kernel wrote"
                )
    return ""


def has_values(outputs: Any) -> bool:
    arrays = outputs.values() if isinstance(outputs, Mapping) else (outputs or ())
    for a in arrays:
        a = np.asarray(a)
        if a.size and not (a.dtype.kind == "f" and canary_mask(a).all()):
            return True
    return False
