"""The norm math functions (``rhypot``, ``norm3d``, ``rnorm3d``, ``norm4d``, ``rnorm4d`` and
their float spellings) in the interpreter: computed in float64 as nested hypot and rounded
once, so squares neither overflow nor underflow."""

from __future__ import annotations

import numpy as np
from simt_helpers import f32, run

F_SRC = """
__global__ void k(float* out, const float* a, const float* b, const float* c, const float* d) {
    int i = threadIdx.x;
    out[5 * i + 0] = rhypotf(a[i], b[i]);
    out[5 * i + 1] = norm3df(a[i], b[i], c[i]);
    out[5 * i + 2] = rnorm3df(a[i], b[i], c[i]);
    out[5 * i + 3] = norm4df(a[i], b[i], c[i], d[i]);
    out[5 * i + 4] = rnorm4df(a[i], b[i], c[i], d[i]);
}
"""


def test_float_norms_are_correctly_rounded():
    rng = np.random.default_rng(3)
    a, b, c, d = (rng.uniform(-50, 50, 32).astype(np.float32) for _ in range(4))
    out = run(F_SRC, a=a, b=b, c=c, d=d, out=np.zeros(160, np.float32))["out"].reshape(32, 5)
    x, y, z, w = (v.astype(np.float64) for v in (a, b, c, d))
    n2, n3 = np.sqrt(x * x + y * y), np.sqrt(x * x + y * y + z * z)
    n4 = np.sqrt(x * x + y * y + z * z + w * w)
    want = np.stack([1 / n2, n3, 1 / n3, n4, 1 / n4], axis=1).astype(np.float32)
    np.testing.assert_array_max_ulp(out, want, maxulp=1)


def test_float_norms_of_large_and_tiny_values():
    big, tiny = f32(*[3e38] * 32), f32(*[1e-30] * 32)
    zero = np.zeros(32, np.float32)
    out = run(F_SRC, a=big, b=zero, c=zero, d=zero, out=np.zeros(160, np.float32))["out"]
    assert out[1] == np.float32(3e38) and out[3] == np.float32(3e38)  # no overflow of x*x
    out = run(F_SRC, a=tiny, b=tiny, c=tiny, d=tiny, out=np.zeros(160, np.float32))["out"]
    assert out[1] == np.float32(np.sqrt(3.0) * 1e-30)  # no underflow of x*x
    assert out[4] == np.float32(0.5e30)


def test_double_norms_keep_double_precision():
    src = """
__global__ void k(double* out, const double* a, const double* b, const double* c) {
    int i = threadIdx.x;
    out[2 * i] = norm3d(a[i], b[i], c[i]);
    out[2 * i + 1] = rhypot(a[i], c[i]);
}
"""
    a = np.full(32, 1e300)
    b = np.linspace(1.0, 2.0, 32)
    c = np.full(32, 3.0)
    out = run(src, a=a, b=b, c=c, out=np.zeros(64))["out"]
    np.testing.assert_allclose(out[0::2], 1e300, rtol=1e-15)  # no overflow in double
    np.testing.assert_allclose(out[1::2], 1e-300, rtol=1e-15)
    out = run(src, a=b, b=b, c=c, out=np.zeros(64))["out"]
    np.testing.assert_allclose(out[0::2], np.sqrt(2 * b * b + 9.0), rtol=1e-15)


def test_a_norm_with_too_few_arguments_is_refused():
    from cuda2nki.frontend import parse_source

    tu = parse_source("__global__ void k(float* p) { p[0] = norm3df(p[1], p[2]); }", "k.cu")
    assert [d.code for d in tu.rejected["k"]] == ["C2N1028"]
