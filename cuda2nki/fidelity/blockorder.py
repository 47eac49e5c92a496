"""Outputs that depend on the order CUDA runs its blocks.

CUDA promises nothing about the order of a grid's blocks: a kernel whose blocks read what other
blocks of the same launch write (a thread of block 0 sums a buffer every block rescales, then
all blocks read the value it stored) computes whatever the schedule gives.  The SIMT
interpreter runs a grid's blocks together, statement by statement; a port (a literal one above
all) may run them one after another.  Both are schedules a GPU may pick, so a port that differs
from the first but equals the second is not wrong: the CUDA kernel's result is not one number.

:func:`judged` runs the kernel once more with its blocks one at a time, in CUDA's block order.
Where that run's output differs from the first, the output is order-dependent: the comparison
that failed is repeated against the second run, and a C2N4033 warning says so either way (the
port matching one schedule, or neither).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cuda2nki.binding import Resolved
from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.fidelity import refcache
from cuda2nki.fidelity.compare import Comparison, compare
from cuda2nki.fidelity.rerun import Outputs, Run, changed, rerun
from cuda2nki.nkisim.dtypes import canary_mask

#: grids with more blocks than this are not run again one block at a time (each block is one
#: interpreter chunk)
MAX_SEQUENTIAL_BLOCKS = 4096


def judged(
    c: Comparison,
    got: np.ndarray,
    first: np.ndarray,
    tol: Any,
    dont_care: np.ndarray | None,
    run: Run,
    found: list[Diagnostic],
) -> Comparison:
    """:func:`reordered`, its warning (if any) added to ``found``."""
    out, warning = reordered(c, got, first, tol, dont_care, run)
    if warning is not None:
        found.append(warning)
    return out


def reordered(
    c: Comparison,
    got: np.ndarray,
    first: np.ndarray,
    tol: Any,
    dont_care: np.ndarray | None,
    run: Run,
) -> tuple[Comparison, Diagnostic | None]:
    """``c`` (a failed comparison of output ``c.name`` against ``first``, the kernel's result
    with its blocks run together), or the comparison with the kernel run one block at a time
    when the two runs differ, with a C2N4033 warning then."""
    seq = _sequential(run.tu, run.name, run.r, run.arrays)
    if seq is None or c.name not in seq:
        return c, None
    ref, mask = seq[c.name]
    first = np.asarray(first)
    if first.shape != ref.shape:
        return c, None
    differ = int(np.count_nonzero(changed(first, ref) & ~mask))
    if differ == 0:
        return c, None
    again = compare(
        c.name,
        got,
        ref,
        tol.bound,
        alt_tols=tol.alternatives,
        unwritten=canary_mask(got),
        dont_care=mask if dont_care is None else (dont_care | mask),
    )
    evidence = (
        f"running all its blocks at once and running them one at a time in CUDA's order give "
        f"different values in {differ} of {first.size} elements (blocks read what other blocks "
        "of the same launch write)"
    )
    if again.ok:
        evidence += "; the port equals the blocks run one at a time, a schedule a GPU may pick"
        return again, make("C2N4033", run.loc, output=c.name, evidence=evidence)
    evidence += "; the port equals neither schedule"
    return c, make("C2N4033", run.loc, output=c.name, evidence=evidence)


def _sequential(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray]
) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """Per output, the kernel's result with its blocks run one at a time in CUDA's order and
    the elements it never writes (None: the grid is too large, or the run fails)."""
    if math.prod(int(g) for g in r.grid) > MAX_SEQUENTIAL_BLOCKS:
        return None
    threads = math.prod(int(b) for b in r.block)
    key = refcache.run_key("reference blocks one at a time", tu, name, r, arrays)
    return refcache.remembered(key, lambda: _run(tu, name, r, arrays, threads))


def _run(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray], chunk: int | None
) -> Outputs | None:
    return rerun(tu, name, r, arrays, chunk_threads=chunk)
