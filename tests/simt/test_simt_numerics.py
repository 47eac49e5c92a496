"""C integer semantics and fp32 rounding, property-tested against exact Python references."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from simt_helpers import tu_of

from cuda2nki.simt import run_kernel

INT_SRC = """
__global__ void k(const int* a, const int* b, int* q, int* r, int* sum, int* prod, int* shl,
                  int* shr, unsigned* uq, unsigned* ur, unsigned* ushr, unsigned* usum, int* neg,
                  int* mix) {
    int i = threadIdx.x;
    int x = a[i], y = b[i];
    q[i] = y != 0 ? x / y : 0;
    r[i] = y != 0 ? x % y : 0;
    sum[i] = x + y;
    prod[i] = x * y;
    int s = y & 31;
    shl[i] = x << s;
    shr[i] = x >> s;
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    uq[i] = uy ? ux / uy : 0u;
    ur[i] = uy ? ux % uy : 0u;
    ushr[i] = ux >> s;
    usum[i] = ux + uy * 3u;
    neg[i] = -x;
    mix[i] = (x < (int)uy) + 2 * (ux < uy) + 4 * (x < 0u);
}
"""

I32 = st.integers(-(2**31), 2**31 - 1)


def wrap(v: int, bits: int = 32, signed: bool = True) -> int:
    v &= (1 << bits) - 1
    if signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def c_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


@cache
def _int_tu():
    return tu_of(INT_SRC)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(I32, I32), min_size=1, max_size=32))
def test_int32_and_uint32_ops_follow_c(pairs) -> None:
    n = len(pairs)
    a = np.array([p[0] for p in pairs], np.int32)
    b = np.array([p[1] for p in pairs], np.int32)
    names = ("q", "r", "sum", "prod", "shl", "shr", "neg", "mix")
    unames = ("uq", "ur", "ushr", "usum")
    args = {
        "a": a,
        "b": b,
        **{k: np.zeros(n, np.int32) for k in names},
        **{k: np.zeros(n, np.uint32) for k in unames},
    }
    out = run_kernel(_int_tu(), "k", grid=(1,), block=(n,), args=args)
    for i, (x, y) in enumerate(pairs):
        s = y & 31
        ux, uy = x & 0xFFFFFFFF, y & 0xFFFFFFFF
        exp = {
            "q": wrap(c_div(x, y)) if y else 0,
            "r": x - c_div(x, y) * y if y else 0,
            "sum": wrap(x + y),
            "prod": wrap(x * y),
            "shl": wrap(x << s),
            "shr": x >> s,
            "neg": wrap(-x),
            "mix": int(x < wrap(uy)) + 2 * int(ux < uy) + 4 * int(ux < 0),
            "uq": ux // uy if uy else 0,
            "ur": ux % uy if uy else 0,
            "ushr": ux >> s,
            "usum": (ux + uy * 3) & 0xFFFFFFFF,
        }
        for k, v in exp.items():
            assert int(out[k][i]) == v, (k, x, y, int(out[k][i]), v)


FLT_SRC = """
__global__ void k(const float* a, const float* b, const float* c, float* add, float* sub,
                  float* mul, float* div, float* fma1, float* dbl, int* toint, float* sq, float* ex) {
    int i = threadIdx.x;
    float x = a[i], y = b[i], z = c[i];
    add[i] = x + y;
    sub[i] = x - y;
    mul[i] = x * y;
    div[i] = x / y;
    fma1[i] = x * y + z;
    dbl[i] = x * 0.1;
    toint[i] = (int)(x * 1000.0f);
    sq[i] = sqrtf(fabsf(x));
    ex[i] = expf(x / 64.0f);
}
"""

F32 = st.floats(-1e6, 1e6, allow_nan=False, width=32)


@cache
def _flt_tu():
    return tu_of(FLT_SRC)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(F32, F32.filter(lambda v: v != 0), F32), min_size=1, max_size=32))
def test_every_float_op_rounds_to_fp32(triples) -> None:
    n = len(triples)
    a, b, c = (np.array([t[j] for t in triples], np.float32) for j in range(3))
    names = ("add", "sub", "mul", "div", "fma1", "dbl", "sq", "ex")
    args = {
        "a": a,
        "b": b,
        "c": c,
        "toint": np.zeros(n, np.int32),
        **{k: np.zeros(n, np.float32) for k in names},
    }
    out = run_kernel(_flt_tu(), "k", grid=(1,), block=(n,), args=args)
    np.testing.assert_array_equal(out["add"], a + b)
    np.testing.assert_array_equal(out["sub"], a - b)
    np.testing.assert_array_equal(out["mul"], a * b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out["div"], a / b)
    np.testing.assert_array_equal(out["fma1"], (a * b) + c)  # two roundings: no contraction
    np.testing.assert_array_equal(out["dbl"], (a.astype(np.float64) * 0.1).astype(np.float32))
    prod = (a * np.float32(1000)).astype(np.float64)
    ref = np.clip(np.trunc(prod), -(2.0**31), 2.0**31 - 1).astype(np.int64)
    np.testing.assert_array_equal(out["toint"], ref)
    np.testing.assert_array_equal(out["sq"], np.sqrt(np.abs(a)))
    with np.errstate(over="ignore"):
        exp = np.exp((a / np.float32(64)).astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out["ex"], exp)


def test_float_to_int_saturates_and_nan_is_zero() -> None:
    src = """
    __global__ void k(const float* x, int* i, unsigned* u, short* s) {
        int t = threadIdx.x;
        i[t] = (int)x[t];
        u[t] = (unsigned)x[t];
        s[t] = (short)(int)x[t];
    }"""
    x = np.array([np.nan, 3e9, -3e9, -1.7, 2.9, 70000.5], np.float32)
    n = len(x)
    out = run_kernel(
        tu_of(src),
        "k",
        grid=(1,),
        block=(n,),
        args={
            "x": x,
            "i": np.zeros(n, np.int32),
            "u": np.zeros(n, np.uint32),
            "s": np.zeros(n, np.int16),
        },
    )
    np.testing.assert_array_equal(out["i"], [0, 2**31 - 1, -(2**31), -1, 2, 70000])
    np.testing.assert_array_equal(out["u"], [0, 3000000000, 0, 0, 2, 70000])
    np.testing.assert_array_equal(out["s"], [0, -1, 0, -1, 2, 70000 - 65536])


def test_char_and_short_promote_and_wrap() -> None:
    src = """
    __global__ void k(const signed char* a, unsigned char* u, int* w) {
        int t = threadIdx.x;
        unsigned char c = a[t];
        c += 200;
        u[t] = c;
        w[t] = a[t] * a[t] + (unsigned char)a[t];
    }"""
    a = np.array([-128, -1, 0, 100, 127], np.int8)
    out = run_kernel(
        tu_of(src),
        "k",
        grid=(1,),
        block=(5,),
        args={"a": a, "u": np.zeros(5, np.uint8), "w": np.zeros(5, np.int32)},
    )
    np.testing.assert_array_equal(out["u"], [(int(v) + 200) & 0xFF for v in a])
    np.testing.assert_array_equal(out["w"], [int(v) * int(v) + (int(v) & 0xFF) for v in a])


def test_math_intrinsics_table_values() -> None:
    src = """
    __global__ void k(const float* x, float* o) {
        int t = threadIdx.x;
        float v = x[t];
        o[t * 8 + 0] = tanhf(v);
        o[t * 8 + 1] = erff(v);
        o[t * 8 + 2] = rsqrtf(fabsf(v) + 1.0f);
        o[t * 8 + 3] = fmaf(v, 3.0f, 1.0f);
        o[t * 8 + 4] = fmaxf(v, 0.5f) + fminf(v, -0.5f);
        o[t * 8 + 5] = roundf(v * 4.0f);
        o[t * 8 + 6] = powf(fabsf(v), 1.5f);
        o[t * 8 + 7] = __int_as_float(__float_as_int(v) ^ 0x80000000);
    }"""
    x = np.array([-2.5, -0.375, 0.0, 0.125, 1.0, 3.3], np.float32)
    n = len(x)
    o = run_kernel(
        tu_of(src), "k", grid=(1,), block=(n,), args={"x": x, "o": np.zeros(8 * n, np.float32)}
    )["o"]
    o = o.reshape(n, 8)
    xd = x.astype(np.float64)
    np.testing.assert_array_equal(o[:, 0], np.tanh(xd).astype(np.float32))
    np.testing.assert_array_equal(o[:, 1], np.array([math.erf(v) for v in xd]).astype(np.float32))
    np.testing.assert_array_equal(
        o[:, 2], (1 / np.sqrt((np.abs(x) + np.float32(1)).astype(np.float64))).astype(np.float32)
    )
    np.testing.assert_array_equal(o[:, 3], (xd * 3 + 1).astype(np.float32))
    np.testing.assert_array_equal(
        o[:, 4], np.fmax(x, np.float32(0.5)) + np.fmin(x, np.float32(-0.5))
    )
    np.testing.assert_array_equal(o[:, 5], np.copysign(np.floor(np.abs(x * 4) + 0.5), x))
    np.testing.assert_array_equal(o[:, 6], (np.abs(xd) ** 1.5).astype(np.float32))
    np.testing.assert_array_equal(o[:, 7], -x)


def test_fmad_contracts_float_multiply_add_when_enabled() -> None:
    from cuda2nki.simt import run_kernel

    src = """
    __global__ void k(const float* x, const float* y, const float* z, float* r, float* acc) {
        int t = threadIdx.x;
        r[t] = x[t] * y[t] + z[t];
        float s = z[t];
        s -= x[t] * y[t];
        acc[t] = s;
    }"""
    rng = np.random.default_rng(5)
    x, y, z = (rng.standard_normal(64).astype(np.float32) for _ in range(3))
    args = {"x": x, "y": y, "z": z, "r": np.zeros(64, np.float32), "acc": np.zeros(64, np.float32)}
    tu = tu_of(src)
    plain = run_kernel(tu, "k", grid=(1,), block=(64,), args=args)
    fused = run_kernel(tu, "k", grid=(1,), block=(64,), args=args, fmad=True)
    xd, yd, zd = (v.astype(np.float64) for v in (x, y, z))
    np.testing.assert_array_equal(plain["r"], x * y + z)
    np.testing.assert_array_equal(fused["r"], (xd * yd + zd).astype(np.float32))
    np.testing.assert_array_equal(fused["acc"], (zd - xd * yd).astype(np.float32))
    assert np.any(plain["r"] != fused["r"])
