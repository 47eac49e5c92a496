"""SIMT reference interpreter: executes the typed CUDA AST on NumPy, vectorised over threads.

Public entry points: :func:`run_kernel` (outputs only) and :func:`run_kernel_full` (outputs plus
warnings and statistics); :data:`INTRINSICS` / :func:`supported_subset` describe what it executes.

Execution model.  The grid runs in chunks of whole blocks (a box of blocks, about a million
threads at a time).  Every statement executes for all active threads of the chunk at once, in
lockstep, with the active set narrowed by ``if``/``else``, loop conditions (a loop runs while any
active thread's condition holds), ``break``/``continue``/``return`` and ``switch``; ``&&``, ``||``
and ``?:`` evaluate their second operand only for the threads that need it, so guarded reads never
fault.  Because every statement completes for all threads before the next begins, ``__syncthreads``
is a barrier by construction (one reached by part of a block is reported, C2N1504), and warps of 32
consecutive linear thread ids see each other's values in shuffles and votes.

Numerics are CUDA's: ``float`` is fp32 with every operation rounded (no contraction unless
``fmad=True``), ``double`` fp64, integers wrap, ``/`` and ``%`` truncate, shifts clamp as PTX does,
float -> int truncates and saturates (NaN -> 0), ``half``/``bfloat16`` are stored as such and
computed in fp32.  Math functions are correctly rounded fp32 (see the table's notes for the fast
intrinsics).  Atomics serialise per address in ascending thread order and return the value each
thread's own operation saw.  Runtime faults (out-of-bounds or misaligned access, integer division
by zero, a loop that exceeds the step budget) raise :class:`~cuda2nki.diagnostics.DiagnosticError`
with a C2N15xx id naming the source line, block and thread.
"""

from cuda2nki.simt.intrinsics import TABLE as INTRINSICS
from cuda2nki.simt.intrinsics import supported_subset, supported_subset_markdown
from cuda2nki.simt.runner import SimtResult, find_kernel, run_kernel, run_kernel_full

__all__ = [
    "INTRINSICS",
    "SimtResult",
    "find_kernel",
    "run_kernel",
    "run_kernel_full",
    "supported_subset",
    "supported_subset_markdown",
]
