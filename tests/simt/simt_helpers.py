"""Shared helpers for the SIMT interpreter tests: compile CUDA source and run one kernel."""

from __future__ import annotations

from typing import Any

import numpy as np

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel_full


def tu_of(src: str, name: str = "k.cu"):
    tu = parse_source(src, name)
    assert not tu.rejected, {k: [d.message for d in v] for k, v in tu.rejected.items()}
    return tu


def run(
    src: str,
    kernel: str | None = None,
    *,
    grid=(1,),
    block=(32,),
    shared_bytes: int = 0,
    poison: bool = True,
    max_steps: int | None = None,
    full: bool = False,
    **args: Any,
):
    tu = tu_of(src)
    res = run_kernel_full(
        tu,
        kernel,
        grid=grid,
        block=block,
        shared_bytes=shared_bytes,
        args=args,
        poison_shared=poison,
        max_steps=max_steps,
    )
    return res if full else res.outputs


def fault(src: str, kernel: str | None = None, **kw: Any):
    """Run expecting a DiagnosticError; return its first diagnostic."""
    try:
        run(src, kernel, **kw)
    except DiagnosticError as exc:
        return exc.diagnostic
    raise AssertionError("expected a diagnostic")


def f32(*vals) -> np.ndarray:
    return np.array(vals, dtype=np.float32)


def i32(*vals) -> np.ndarray:
    return np.array(vals, dtype=np.int32)
