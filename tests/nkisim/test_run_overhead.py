"""What a kernel run does around the kernel to keep its fixed cost per instruction low: the
heap that exists before the run is left out of the cycle collector's full passes
(``kernel._frozen_heap``), floating-point warnings are turned off once for the whole run
(``ops.warnings_off``), and the on-chip occupancy is summed column by column
(``state.occupancy``).  Each is pinned here for its semantics, never by timing."""

from __future__ import annotations

import gc
import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, ops, simulate_kernel
from cuda2nki.nkisim.state import occupancy

SEEN: list = []  # what the kernels below observe while they run

KERNELS = """
import nki
import nki.isa as nisa
import nki.language as nl
from cuda2nki.nkisim import ops


@nki.jit
def observe(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    SEEN.append((gc.get_freeze_count() > 0, bool(ops._WARNINGS_OFF)))
    nisa.activation(dst=t, op=nl.exp, data=t)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def fails(x):
    SEEN.append((gc.get_freeze_count() > 0, bool(ops._WARNINGS_OFF)))
    t = nl.ndarray((256, 4), x.dtype, buffer=nl.sbuf)
    return t
"""


def _kernel(tmp_path, name: str):
    path = tmp_path / "kernels.py"
    path.write_text("import gc\n" + textwrap.dedent(KERNELS))
    kernel = load_kernel(str(path), name)
    kernel.fn.__globals__["SEEN"] = SEEN
    return kernel


def test_a_run_freezes_the_older_heap_and_thaws_it_after(tmp_path):
    SEEN.clear()
    x = np.full((128, 4), 100.0, np.float32)  # exp overflows: no warning escapes the run
    res = simulate_kernel(_kernel(tmp_path, "observe"), [x])
    assert np.isinf(np.asarray(res.outputs)).all()
    assert SEEN == [(True, True)]
    assert gc.get_freeze_count() == 0 and not ops._WARNINGS_OFF


def test_a_failing_run_thaws_the_heap_too(tmp_path):
    SEEN.clear()
    with pytest.raises(DiagnosticError):
        simulate_kernel(_kernel(tmp_path, "fails"), [np.zeros((128, 4), np.float32)])
    assert SEEN == [(True, True)]
    assert gc.get_freeze_count() == 0 and not ops._WARNINGS_OFF


def test_objects_the_caller_froze_stay_frozen(tmp_path):
    """Where the process froze objects of its own, a run leaves the collector alone (thawing
    at its end would thaw them too)."""
    SEEN.clear()
    gc.freeze()
    try:
        simulate_kernel(_kernel(tmp_path, "observe"), [np.zeros((128, 4), np.float32)])
        assert gc.get_freeze_count() > 0  # not thawed by the run
    finally:
        gc.unfreeze()
    assert SEEN == [(True, True)]


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "reciprocal", "sigmoid"])
def test_unary_functions_stay_quiet_outside_a_run(name):
    """Outside a run (the ops serve other callers too) each function still turns off the
    warnings its arithmetic raises at the edges of its domain."""
    x = np.array([0.0, -1.0, 1e30, 100.0], np.float32)
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        got = ops.UNARY[name](x)
    with np.errstate(all="ignore"):
        want = {
            "exp": np.exp,
            "log": np.log,
            "sqrt": np.sqrt,
            "rsqrt": lambda v: np.float32(1) / np.sqrt(v),
            "reciprocal": lambda v: np.float32(1) / v,
            "sigmoid": lambda v: (1.0 / (1.0 + np.exp(-v))).astype(np.float32),
        }[name](x)
    np.testing.assert_array_equal(got, want)


def _occupancy_by_hand(ranges: list, n: int, col: int) -> np.ndarray:
    occ = np.zeros(n + 1, np.int64)
    for r in ranges:
        occ[r[0] : r[1] + 1] += r[col]
    return occ


@pytest.mark.parametrize("col", [2, 4])
def test_occupancy_sums_each_range_over_its_instructions(col):
    rng = np.random.default_rng(5)
    n = 200
    ranges = []
    for _ in range(300):
        first = int(rng.integers(0, n))
        last = int(rng.integers(first, n + 1))
        site = ("k.py", int(rng.integers(1, 50)))
        ranges.append((first, last, int(rng.integers(1, 9000)), site, int(rng.integers(1, 4))))
    np.testing.assert_array_equal(occupancy(ranges, n, col), _occupancy_by_hand(ranges, n, col))
    assert occupancy([], n, col).tolist() == [0] * (n + 1)
