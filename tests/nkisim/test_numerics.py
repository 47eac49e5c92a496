"""Numerics: RNE rounding on narrowing writes, fp32->int saturation, poison, PSUM accumulation."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from hypothesis.extra import numpy as hnp

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import wrap_host


@pytest.fixture
def fresh_state():
    s = st.SimState()
    st.push(s)
    yield s
    st.pop()


def _bf16_rne_reference(x: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 by hand (RNE on the upper 16 bits), finite values only."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return (r.astype(np.uint32) << 16).view(np.float32)


def test_bf16_write_is_round_to_nearest_even(fresh_state):
    # halfway cases: 1 + 2^-8 lies exactly between two bf16 values; RNE picks the even one
    vals = np.array(
        [[1.0 + 2**-8, 1.0 + 3 * 2**-8, -(1.0 + 2**-8), 1.0 + 2**-8 + 2**-20]], np.float32
    )
    src = wrap_host(vals)
    t = nl.ndarray((1, 4), nl.bfloat16)
    nisa.dma_copy(dst=t, src=src)
    got = t.values().astype(np.float32)
    np.testing.assert_array_equal(got, [[1.0, 1.0 + 4 * 2**-8, -1.0, 1.0 + 2 * 2**-8]])


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        np.float32, (4, 8), elements=hs.floats(width=32, allow_nan=False, allow_infinity=False)
    )
)
def test_bf16_rounding_matches_bit_reference(x):
    s = st.SimState()
    st.push(s)
    try:
        t = nl.ndarray((4, 8), nl.bfloat16)
        nisa.dma_copy(dst=t, src=wrap_host(x))
        np.testing.assert_array_equal(t.values().astype(np.float32), _bf16_rne_reference(x))
    finally:
        st.pop()


def test_fp32_to_int_rounds_half_even_and_saturates():
    v = np.array(
        [0.5, 1.5, 2.5, -0.5, -1.5, 127.4, 300.0, -300.0, np.inf, -np.inf, np.nan], np.float32
    )
    np.testing.assert_array_equal(
        dt.convert(v, dt.int8), np.array([0, 2, 2, 0, -2, 127, 127, -128, 127, -128, 0], np.int8)
    )
    np.testing.assert_array_equal(
        dt.convert(np.array([-5.0, 70000.0], np.float32), dt.uint16),
        np.array([0, 65535], np.uint16),
    )
    assert dt.convert(np.array([3e9], np.float32), dt.int32)[0] == 2**31 - 1


def test_tfloat32_keeps_ten_mantissa_bits():
    x = np.array([1.0 + 2**-11, 1.0 + 3 * 2**-11, 1.0 + 2**-12], np.float32)
    np.testing.assert_array_equal(dt.round_tf32(x), np.array([1.0, 1.0 + 2**-9, 1.0], np.float32))


def test_fp8_overflow_choices():
    big = np.array([1e6, -1e6], np.float32)
    assert np.isinf(dt.convert(big, dt.float8_e5m2).astype(np.float32)).all()
    # e4m3fn has no infinity: ml_dtypes (and we) produce NaN on overflow (documented choice)
    assert np.isnan(dt.convert(big, dt.float8_e4m3fn).astype(np.float32)).all()


def test_fresh_tiles_are_poisoned(fresh_state):
    f = nl.ndarray((128, 4), nl.float32)
    i = nl.ndarray((128, 4), nl.int32)
    assert np.isnan(f.values()).all()
    assert (i.values() == 4).all()


def test_partial_write_keeps_poison_elsewhere(fresh_state):
    t = nl.ndarray((128, 8), nl.float32)
    nisa.memset(t[:, 0:4], 1.0)
    v = t.values()
    assert (v[:, :4] == 1).all() and np.isnan(v[:, 4:]).all()


def test_vector_math_is_fp32_with_one_rounding(fresh_state):
    # bf16 inputs, bf16 output: the sum is computed in fp32 and rounded once
    a = wrap_host(np.full((1, 2), 1.0, np.float32), dt.bfloat16)
    b = wrap_host(np.array([[2**-9, 2**-8 + 2**-9]], np.float32), dt.bfloat16)
    ta, tb = nl.ndarray((1, 2), nl.bfloat16), nl.ndarray((1, 2), nl.bfloat16)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    out = nl.ndarray((1, 2), nl.bfloat16)
    nisa.tensor_tensor(dst=out, data1=ta, data2=tb, op=nl.add)
    exp = np.array([[1.0 + 2**-9, 1.0 + 2**-8 + 2**-9]], np.float32).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.values(), exp)


def test_matmul_accumulate_none_first_write_overwrites(fresh_state):
    s = nl.ndarray((2, 2), nl.bfloat16)
    m = nl.ndarray((2, 3), nl.bfloat16)
    nisa.memset(s, 1.0)
    nisa.memset(m, 1.0)
    acc = nl.ndarray((2, 3), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, s, m)  # first write: overwrite the NaN poison
    nisa.nc_matmul(acc, s, m)  # later writes accumulate
    np.testing.assert_array_equal(acc.values(), np.full((2, 3), 4.0, np.float32))
    nisa.nc_matmul(acc, s, m, accumulate=False)
    np.testing.assert_array_equal(acc.values(), np.full((2, 3), 2.0, np.float32))


def test_matmul_accumulate_none_tracks_elements(fresh_state):
    s = nl.ndarray((2, 2), nl.float32)
    m = nl.ndarray((2, 4), nl.float32)
    nisa.memset(s, 1.0)
    nisa.memset(m, 1.0)
    acc = nl.ndarray((2, 4), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc[:, 0:2], s, m[:, 0:2])
    nisa.nc_matmul(acc, s, m)  # columns 0-1 accumulate, 2-3 are first writes
    np.testing.assert_array_equal(acc.values(), [[4, 4, 2, 2], [4, 4, 2, 2]])


def test_matmul_accumulate_true_on_unwritten_psum_warns(fresh_state):
    s = nl.ndarray((2, 2), nl.float32)
    nisa.memset(s, 1.0)
    acc = nl.ndarray((2, 2), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, s, s, accumulate=True)
    assert [w.code for w in fresh_state.warnings] == ["C2N3027"]
    assert np.isnan(acc.values()).all()


def test_deferred_k_accumulation_matches_direct_sum(fresh_state):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((384, 64), dtype=np.float32)
    b = rng.standard_normal((384, 96), dtype=np.float32)
    acc = nl.ndarray((64, 96), nl.float32, buffer=nl.psum)
    for k in range(3):
        sa, sb = nl.ndarray((128, 64), nl.float32), nl.ndarray((128, 96), nl.float32)
        nisa.dma_copy(dst=sa, src=wrap_host(a[k * 128 : (k + 1) * 128]))
        nisa.dma_copy(dst=sb, src=wrap_host(b[k * 128 : (k + 1) * 128]))
        nisa.nc_matmul(acc, sa, sb, accumulate=k > 0)
        nisa.memset(sa, 0.0)  # overwriting operands after the call must not matter
    np.testing.assert_allclose(acc.values(), a.T @ b, rtol=1e-5, atol=1e-4)


def test_activation_range_warning(fresh_state):
    x = nl.ndarray((1, 2), nl.float32)
    nisa.memset(x, 9.0)
    y = nl.ndarray((1, 2), nl.float32)
    nisa.activation(y, nl.sin, x)
    assert [w.code for w in fresh_state.warnings] == ["C2N3028"]
