"""Kernels are simulated with BLAS limited to one thread; the caller's setting comes back after."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import simulate_kernel


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in ThreadpoolController().info() if p["user_api"] == "blas"]


def test_blas_single_threaded_inside_kernel_and_restored_after() -> None:
    ctl = ThreadpoolController()
    seen: list[list[int]] = []

    def kernel(x):
        seen.append(_blas_threads())
        return 0

    with ctl.limit(limits=2, user_api="blas"):
        before = _blas_threads()
        simulate_kernel(kernel, [np.ones((4, 4), np.float32)])
        after = _blas_threads()
    assert seen and seen[0] and all(n == 1 for n in seen[0])
    assert after == before


def test_blas_restored_when_the_kernel_fails() -> None:
    def kernel(x):
        raise ValueError("port bug")

    before = _blas_threads()
    with pytest.raises(DiagnosticError):
        simulate_kernel(kernel, [np.ones((4, 4), np.float32)])
    assert _blas_threads() == before
