"""Kernels that draw random numbers from a cuRAND generator state.

The interpreter runs cuRAND's generators (:mod:`cuda2nki.simt.curand`), but NKI has no
counter- or state-based random stream that reproduces them, and a port that drew other numbers
would not compute what the kernel computes.  Such kernels are refused by the lifter and the
literal lowering alike, naming the first generator call (in the kernel or a device function it
calls).
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.intrinsics import CURAND_FUNCS
from cuda2nki.frontend.visit import reachable_calls

WHY = "NKI has no random stream that reproduces cuRAND's generators"


def rng_call(tu: A.TranslationUnit, fn: A.Function) -> A.Call | None:
    """The first cuRAND call ``fn`` makes, directly or through the device functions it calls."""
    calls = reachable_calls(tu, fn)
    return next((c for c in calls if c.target is None and c.func in CURAND_FUNCS), None)


def rng_construct(call: A.Call) -> str:
    """The refusal's wording for a generator call."""
    return f"the cuRAND call '{call.func}' ({WHY})"
