"""``nisa.sequence_bounds`` against a direct transcription of its documented loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import wrap_host


def reference(seq: np.ndarray) -> np.ndarray:
    """Start (first index) and exclusive end of each element's run; padding (id 0) -> [n, -1]."""
    n = len(seq)
    lo = np.zeros(n, np.int64)
    hi = np.zeros(n, np.int64)
    for i in range(n):
        if seq[i] == 0:
            lo[i] = n
        elif i > 0 and seq[i] == seq[i - 1]:
            lo[i] = lo[i - 1]
        else:
            lo[i] = i
    for i in range(n - 1, -1, -1):
        if seq[i] == 0:
            hi[i] = -1
        elif i < n - 1 and seq[i] == seq[i + 1]:
            hi[i] = hi[i + 1]
        else:
            hi[i] = i + 1
    return np.stack([lo, hi])[None]


def run(seq: np.ndarray, in_dtype, out_dtype) -> np.ndarray:
    ids = nl.ndarray((1, seq.size), in_dtype)
    nisa.dma_copy(dst=ids, src=wrap_host(seq.reshape(1, -1).astype(ids.dtype.np_dtype)))
    dst = nl.ndarray((1, 2, seq.size), out_dtype)
    nisa.sequence_bounds(dst=dst, segment_ids=ids)
    return dst.values()


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.integers(0, 3), min_size=1, max_size=40), hs.booleans(), hs.booleans())
def test_matches_documented_loop(ids, int_in, int_out):
    s = st.SimState()
    st.push(s)
    try:
        seq = np.array(ids, np.int64)
        got = run(seq, nl.int32 if int_in else nl.float32, nl.int32 if int_out else nl.float32)
        np.testing.assert_array_equal(got.astype(np.int64), reference(seq))
        assert s.trace[-1].engine == "gpsimd" and s.trace[-1].op == "sequence_bounds"
    finally:
        st.pop()


def test_example_segments():
    s = st.SimState()
    st.push(s)
    try:
        got = run(np.array([1, 1, 2, 2, 2, 0, 0, 3]), nl.int32, nl.int32)
        np.testing.assert_array_equal(
            got[0], [[0, 0, 2, 2, 2, 8, 8, 7], [2, 2, 5, 5, 5, -1, -1, 8]]
        )
        ids = nl.ndarray((2, 4), nl.int32)
        nisa.memset(ids, 1)
        with pytest.raises(DiagnosticError) as exc:
            nisa.sequence_bounds(dst=nl.ndarray((2, 8), nl.int32), segment_ids=ids)
        assert exc.value.diagnostic.code == "C2N3014"
    finally:
        st.pop()
