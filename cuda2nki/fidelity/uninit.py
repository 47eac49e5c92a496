"""Outputs that depend on shared or local memory no thread wrote.

A CUDA kernel may read shared memory (or a local array) that no thread of the launch wrote: a
tree reduction guarded by ``if (tid >= n) return;`` still adds ``smem[tid + 512]`` for a block
with fewer than 1024 live threads.  On a GPU such an element is whatever the memory held; the
SIMT interpreter fills never-written shared memory and local arrays with a poison pattern (NaN,
``0xDEADBEEF``) so that such reads show, and the reference then holds a value computed from the
poison, which no port can reproduce.

:func:`judged` runs the kernel once more with never-written memory reading as zeros.  Elements
whose value differs between the two runs depend on memory no thread wrote: they are undefined,
and left out of the comparison that failed, with a C2N4035 warning saying how many (a port
equal to the kernel on the other elements passes its numbers; one that is not still fails, with
the warning).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuda2nki.binding import Resolved
from cuda2nki.diagnostics import Diagnostic, SourceLoc, make
from cuda2nki.fidelity import refcache
from cuda2nki.fidelity.compare import Comparison, compare
from cuda2nki.fidelity.rerun import Outputs, Run, changed, rerun
from cuda2nki.nkisim.dtypes import canary_mask


def judged(
    c: Comparison,
    got: np.ndarray,
    first: np.ndarray,
    tol: Any,
    dont_care: np.ndarray | None,
    run: Run,
    found: list[Diagnostic],
) -> Comparison:
    """``c`` (a failed comparison of output ``c.name`` against ``first``, the kernel's result
    with never-written memory poisoned), or the comparison without the elements that depend on
    never-written memory, when there are such; a C2N4035 warning added to ``found`` then."""
    zeroed = _zeroed(run.tu, run.name, run.r, run.arrays)
    if zeroed is None or c.name not in zeroed:
        return c
    ref, mask = zeroed[c.name]
    first = np.asarray(first)
    if first.shape != ref.shape:
        return c
    undefined = changed(first, ref) & ~mask
    count = int(np.count_nonzero(undefined))
    if count == 0:
        return c
    skip = undefined | mask if dont_care is None else (dont_care | mask | undefined)
    again = compare(
        c.name,
        got,
        first,
        tol.bound,
        alt_tols=tol.alternatives,
        unwritten=canary_mask(got),
        dont_care=skip,
    )
    evidence = (
        f"{count} of {first.size} elements are computed from shared or local memory no thread "
        "wrote (they change when never-written memory reads as zeros instead of a poison "
        "pattern); on a GPU they are whatever that memory held, so they are not compared"
    )
    loc = _kernel_loc(run.tu, run.name)
    if again.ok:
        rest = int(np.count_nonzero(~skip))
        evidence += (
            "; the port equals the kernel on the other elements"
            if rest
            else "; no other element is defined at this point"
        )
        found.append(make("C2N4035", loc, output=c.name, evidence=evidence))
        return again
    evidence += "; the port differs on the other elements too"
    found.append(make("C2N4035", loc, output=c.name, evidence=evidence))
    return c


def _kernel_loc(tu: Any, name: str) -> SourceLoc:
    for f in getattr(tu, "functions", ()):
        if f.name == name:
            return f.loc
    return SourceLoc(getattr(tu, "path", "") or "<cuda>", 1, 1)


def _zeroed(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray]
) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """Per output, the kernel's result with never-written shared and local memory reading as
    zeros, and the elements it never writes (None: the run fails)."""
    key = refcache.run_key("reference with zeroed shared memory", tu, name, r, arrays)
    return refcache.remembered(key, lambda: _run(tu, name, r, arrays))


def _run(tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray]) -> Outputs | None:
    return rerun(tu, name, r, arrays, poison_shared=False)
