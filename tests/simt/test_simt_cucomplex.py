"""cuComplex / cuFFT complex types and the cuComplex.h helpers, run by the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from simt_helpers import run

from cuda2nki.frontend import parse_source

FLOAT_SRC = """
#include <cuComplex.h>
#include <cufft.h>
__global__ void k(cuFloatComplex *a, const cuComplex *b, cufftComplex *c, float *mag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuFloatComplex p = cuCmulf(a[i], b[i]);
    cuFloatComplex q = cuCdivf(p, cuConjf(b[i]));
    c[i] = cuCaddf(cuCsubf(q, make_cuFloatComplex(1.0f, 2)), cuCfmaf(a[i], b[i], p));
    mag[i] = cuCabsf(p) + cuCrealf(q) * cuCimagf(q);
}
"""


def _cplx(rng, n, dt=np.float32):
    return (rng.standard_normal(2 * n) + 0.1).astype(dt)


def test_float_helpers_match_complex_arithmetic() -> None:
    rng = np.random.default_rng(1)
    n = 40
    a, b = _cplx(rng, n), _cplx(rng, n)
    got = run(
        FLOAT_SRC,
        "k",
        block=(64,),
        a=a,
        b=b,
        c=np.zeros(2 * n, np.float32),
        mag=np.zeros(n, np.float32),
        n=n,
    )
    za = a.astype(np.float64).view(np.complex128)
    zb = b.astype(np.float64).view(np.complex128)
    p = za * zb
    q = p / np.conj(zb)
    c = (q - (1 + 2j)) + (za * zb + p)
    np.testing.assert_allclose(
        got["c"].astype(np.float64).view(np.complex128), c, rtol=2e-5, atol=2e-5
    )
    np.testing.assert_allclose(got["mag"], np.abs(p) + q.real * q.imag, rtol=2e-5, atol=2e-5)


def test_double_helpers_and_conversions() -> None:
    src = """
#include <cuComplex.h>
__global__ void k(const cuDoubleComplex *x, const cufftDoubleComplex *y, cuDoubleComplex *z,
                  cuFloatComplex *f, double *r, int n) {
    int i = threadIdx.x;
    if (i < n) {
        cuDoubleComplex d = cuCdiv(cuCmul(x[i], y[i]), make_cuDoubleComplex(2.0, -1.0));
        z[i] = cuCfma(x[i], cuConj(y[i]), cuCadd(d, cuCsub(x[i], y[i])));
        f[i] = cuComplexDoubleToFloat(d);
        r[i] = cuCabs(cuComplexFloatToDouble(f[i])) - cuCreal(d) + cuCimag(d);
    }
}
"""
    rng = np.random.default_rng(2)
    n = 16
    x, y = _cplx(rng, n, np.float64), _cplx(rng, n, np.float64)
    got = run(
        src,
        "k",
        block=(16,),
        x=x,
        y=y,
        z=np.zeros(2 * n),
        f=np.zeros(2 * n, np.float32),
        r=np.zeros(n),
        n=n,
    )
    zx, zy = x.view(np.complex128), y.view(np.complex128)
    d = zx * zy / (2 - 1j)
    want = zx * np.conj(zy) + (d + (zx - zy))
    np.testing.assert_allclose(got["z"].view(np.complex128), want, rtol=1e-12)
    df = d.astype(np.complex64)
    np.testing.assert_array_equal(got["f"].view(np.complex64), df)
    np.testing.assert_allclose(
        got["r"], np.abs(df.astype(np.complex128)) - d.real + d.imag, rtol=1e-12
    )


@pytest.mark.parametrize(
    "name", ["cufftComplex", "cuComplex", "cuFloatComplex", "cufftDoubleComplex", "cufftReal"]
)
def test_library_type_names_are_their_vector_types(name: str) -> None:
    src = f"__global__ void k({name} *p, int n) {{ p[threadIdx.x] = p[threadIdx.x]; }}"
    tu = parse_source(src, "t.cu")
    assert not tu.rejected
    want = {"cufftReal": "float32", "cufftDoubleComplex": "double2"}.get(name, "float2")
    pointee = tu.kernels[0].params[0].ty.pointee
    assert getattr(pointee, "name", None) == want


def test_an_argument_with_side_effects_is_evaluated_once() -> None:
    src = """
#include <cuComplex.h>
__global__ void k(cuFloatComplex *a, int *count) {
    int i = 0;
    a[2] = cuCmulf(a[i++], a[1]);
    count[0] = i;
}
"""
    a = np.array([1, 2, 3, 4, 0, 0], np.float32)
    got = run(src, "k", block=(1,), a=a, count=np.zeros(1, np.int32))
    want = np.complex64(1 + 2j) * np.complex64(3 + 4j)
    assert got["a"][4:].tolist() == [want.real, want.imag]
    assert got["count"][0] == 1


SPILLED = {
    "abs-of-a-call": ("cuCabsf(twist(z1, z2))", lambda z1, z2: abs(z1 * z2 * (1 + 1j))),
    "nested-calls": (
        "cuCrealf(cuCaddf(twist(z1, z1), twist(z2, z1)))",
        lambda z1, z2: (z1 * z1 * (1 + 1j) + z2 * z1 * (1 + 1j)).real,
    ),
    "div-by-a-counted-call": (
        "cuCimagf(cuCdivf(z1, counted(z2, hits)))",
        lambda z1, z2: (z1 / z2).imag,
    ),
}


@pytest.mark.parametrize("spelling", sorted(SPILLED))
def test_a_helper_of_a_user_call_computes_the_call_once(spelling: str) -> None:
    expr, want = SPILLED[spelling]
    src = f"""
#include <cuComplex.h>
__device__ cuFloatComplex twist(cuFloatComplex a, cuFloatComplex b) {{
    return cuCmulf(cuCmulf(a, b), make_cuFloatComplex(1.0f, 1.0f));
}}
__device__ cuFloatComplex counted(cuFloatComplex z, int *hits) {{
    atomicAdd(hits, 1);
    return z;
}}
__global__ void k(const float *re, const float *im, float *out, int *hits, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuFloatComplex z1 = make_cuFloatComplex(re[i], im[i]);
    cuFloatComplex z2 = make_cuFloatComplex(im[i] + 2.0f, re[i]);
    out[i] = {expr};
}}
"""
    rng = np.random.default_rng(5)
    n = 50
    re, im = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    got = run(
        src,
        "k",
        block=(64,),
        re=re,
        im=im,
        out=np.zeros(n, np.float32),
        hits=np.zeros(1, np.int32),
        n=n,
    )
    z1, z2 = re + 1j * im, (im + 2.0) + 1j * re
    np.testing.assert_allclose(got["out"], want(z1, z2), rtol=2e-5, atol=2e-6)
    assert got["hits"][0] == (n if "counted" in expr else 0)


def test_user_helpers_of_the_same_name_win() -> None:
    """A file that defines its own ``cuCaddf`` (some old samples do) keeps it."""
    src = """
__device__ float2 cuCaddf(float2 a, float2 b) { return make_float2(a.x + b.x, 0.0f); }
__global__ void k(float2 *a) { a[threadIdx.x] = cuCaddf(a[threadIdx.x], a[threadIdx.x]); }
"""
    got = run(src, "k", block=(2,), a=np.array([1, 2, 3, 4], np.float32))
    assert got["a"].tolist() == [2, 0, 6, 0]
