"""SIMT reference interpreter: executes the typed CUDA AST on NumPy, vectorised over threads.

Public entry points: :func:`run_kernel` (outputs only) and :func:`run_kernel_full` (outputs plus
warnings and statistics); :data:`INTRINSICS` / :func:`supported_subset` describe what it executes.
"""

from cuda2nki.simt.intrinsics import TABLE as INTRINSICS
from cuda2nki.simt.intrinsics import supported_subset
from cuda2nki.simt.runner import SimtResult, find_kernel, run_kernel, run_kernel_full

__all__ = [
    "INTRINSICS",
    "SimtResult",
    "find_kernel",
    "run_kernel",
    "run_kernel_full",
    "supported_subset",
]
