"""Property tests: elementwise and reduction ops against NumPy across dtypes and shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import wrap_host

FLOATS = ["float32", "bfloat16", "float16"]
SHAPES = hs.tuples(hs.integers(1, 128), hs.integers(1, 40))
SETTINGS = settings(max_examples=25, deadline=None)


class _State:
    def __enter__(self):
        st.push(st.SimState())

    def __exit__(self, *exc):
        st.pop()


def _tile(values: np.ndarray, dtype) -> object:
    h = wrap_host(values.astype(np.float32), dt.as_dtype(dtype))
    t = nl.ndarray(values.shape, dt.as_dtype(dtype))
    nisa.dma_copy(dst=t, src=h)
    return t


def _data(seed: int, shape, lo=-4.0, hi=4.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def _stored(x: np.ndarray, dtype: str) -> np.ndarray:
    """What a tile of ``dtype`` holds for these values, widened to float32."""
    return dt.convert(x, dt.as_dtype(dtype)).astype(np.float32)


BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
UNARY = {
    "exp": np.exp,
    "tanh": np.tanh,
    "abs": np.abs,
    "square": np.square,
    "negative": np.negative,
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}


@SETTINGS
@given(
    shape=SHAPES,
    dtype=hs.sampled_from(FLOATS),
    op=hs.sampled_from(sorted(BINARY)),
    seed=hs.integers(0, 2**16),
)
def test_nl_binary_matches_numpy(shape, dtype, op, seed):
    a, b = _data(seed, shape), _data(seed + 1, shape)
    with _State():
        r = getattr(nl, op)(_tile(a, dtype), _tile(b, dtype))
        got = r.values()
        assert r.dtype.name == dtype and got.shape == shape
    want = dt.convert(BINARY[op](_stored(a, dtype), _stored(b, dtype)), dt.as_dtype(dtype))
    np.testing.assert_array_equal(got, want)


@SETTINGS
@given(
    shape=SHAPES,
    dtype=hs.sampled_from(FLOATS),
    op=hs.sampled_from(sorted(BINARY)),
    seed=hs.integers(0, 2**16),
    out=hs.sampled_from(FLOATS),
)
def test_tensor_tensor_output_dtype_rounding(shape, dtype, op, seed, out):
    a, b = _data(seed, shape), _data(seed + 1, shape)
    with _State():
        d = nl.ndarray(shape, dt.as_dtype(out))
        nisa.tensor_tensor(dst=d, data1=_tile(a, dtype), data2=_tile(b, dtype), op=getattr(nl, op))
        got = d.values()
    want = dt.convert(BINARY[op](_stored(a, dtype), _stored(b, dtype)), dt.as_dtype(out))
    np.testing.assert_array_equal(got, want)


@SETTINGS
@given(
    shape=SHAPES,
    dtype=hs.sampled_from(FLOATS),
    op=hs.sampled_from(sorted(UNARY)),
    seed=hs.integers(0, 2**16),
)
def test_nl_unary_matches_numpy(shape, dtype, op, seed):
    a = _data(seed, shape)
    with _State():
        got = getattr(nl, op)(_tile(a, dtype)).values().astype(np.float32)
    want = dt.convert(UNARY[op](_stored(a, dtype)).astype(np.float32), dt.as_dtype(dtype))
    np.testing.assert_allclose(
        got, want.astype(np.float32), rtol=1e-6 if dtype == "float32" else 1e-2, atol=1e-6
    )


@SETTINGS
@given(
    shape=SHAPES,
    op=hs.sampled_from(
        [
            "add",
            "subtract",
            "multiply",
            "maximum",
            "minimum",
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
        ]
    ),
    seed=hs.integers(0, 2**16),
)
def test_int32_tensor_tensor_is_exact(shape, op, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-(2**20), 2**20, shape, dtype=np.int32)
    b = rng.integers(-(2**10), 2**10, shape, dtype=np.int32)
    with _State():
        ta, tb = nl.ndarray(shape, nl.int32), nl.ndarray(shape, nl.int32)
        nisa.dma_copy(dst=ta, src=wrap_host(a))
        nisa.dma_copy(dst=tb, src=wrap_host(b))
        d = nl.ndarray(shape, nl.int32)
        nisa.tensor_tensor(dst=d, data1=ta, data2=tb, op=getattr(nl, op))
        got = d.values()
    np.testing.assert_array_equal(got, getattr(np, op)(a.astype(np.int64), b).astype(np.int32))


REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean, "prod": np.prod}


@SETTINGS
@given(
    p=hs.integers(1, 128),
    f1=hs.integers(1, 12),
    f2=hs.integers(1, 12),
    dtype=hs.sampled_from(FLOATS),
    op=hs.sampled_from(sorted(REDUCE)),
    axes=hs.sampled_from([(2,), (1, 2)]),
    keep=hs.booleans(),
    seed=hs.integers(0, 2**16),
)
def test_nl_reductions_match_numpy(p, f1, f2, dtype, op, axes, keep, seed):
    a = _data(seed, (p, f1, f2), -1.5, 1.5)
    with _State():
        r = getattr(nl, op)(_tile(a, dtype), axis=list(axes), keepdims=keep)
        got = r.values().astype(np.float32)
    ref = REDUCE[op](_stored(a, dtype), axis=axes, keepdims=keep).astype(np.float32)
    if ref.ndim < 2:
        ref = ref.reshape(p, 1)
    want = dt.convert(ref, dt.as_dtype(dtype)).astype(np.float32)
    assert got.shape == want.shape
    tol = 1e-5 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


@SETTINGS
@given(
    shape=SHAPES,
    seed=hs.integers(0, 2**16),
    op=hs.sampled_from(["add", "maximum", "minimum"]),
    negate=hs.booleans(),
)
def test_tensor_reduce_matches_numpy(shape, seed, op, negate):
    a = _data(seed, shape)
    with _State():
        d = nl.ndarray((shape[0], 1), nl.float32)
        nisa.tensor_reduce(
            dst=d, op=getattr(nl, op), data=_tile(a, "float32"), axis=1, negate=negate
        )
        got = d.values()
    ref = {"add": np.sum, "maximum": np.max, "minimum": np.min}[op](a, axis=1, keepdims=True)
    np.testing.assert_allclose(got, -ref if negate else ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_and_rmsnorm_match_numpy(dtype):
    a = _data(3, (64, 33))
    w = _data(4, (64, 33))
    with _State():
        sm = nl.softmax(_tile(a, dtype), axis=1).values().astype(np.float32)
        rn = nl.rms_norm(_tile(a, dtype), _tile(w, dtype), axis=1, n=33).values().astype(np.float32)
    x = _stored(a, dtype)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    tol = 1e-5 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(sm, e / e.sum(axis=1, keepdims=True), rtol=tol, atol=tol)
    ref = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * _stored(w, dtype)
    np.testing.assert_allclose(rn, ref, rtol=tol * 2, atol=tol * 2)
