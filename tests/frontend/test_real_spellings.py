"""Spellings of public CUDA samples that the front end used to misread: ``clock_t``, a
kernel's template constant forwarded to a device template, a variable's name in parentheses
read as a cast (``(lo) && (x)`` from a macro)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import LONG

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "simt"))
from simt_helpers import run  # noqa: E402


def test_clock_t_is_a_long(parse) -> None:
    tu = parse(
        "__global__ static void timed(const float* in, float* out, clock_t* timer) {\n"
        "  clock_t start = clock();\n  out[threadIdx.x] = in[threadIdx.x];\n"
        "  if (threadIdx.x == 0) timer[blockIdx.x] = clock() - start;\n}\n"
    )
    assert tu.rejected == {}, tu.diagnostics
    assert tu.kernels[0].params[2].ty == A.PointerType(pointee=LONG)


FORWARD = """
template <{t} dir> __device__ inline unsigned pick(unsigned a, unsigned b) {{
    return dir ? a : b;
}}
template <{t} dir> __global__ void k(unsigned* o, const unsigned* in) {{
    o[threadIdx.x] = pick<dir>(in[threadIdx.x], 7u) + (unsigned)dir;
}}
void go(unsigned* o, const unsigned* in, int d) {{
    if (d) k<{one}><<<1, 32>>>(o, in); else k<{zero}><<<1, 32>>>(o, in);
}}
"""


@pytest.mark.parametrize(
    ("t", "one", "zero"), [("uint", "1U", "0U"), ("int", "1", "0"), ("bool", "true", "false")]
)
def test_template_constant_forwarded_to_a_device_template(parse, t, one, zero) -> None:
    src = ("typedef unsigned int uint;\n" if t == "uint" else "") + FORWARD.format(
        t=t, one=one, zero=zero
    )
    tu = parse(src)
    assert tu.rejected == {}, tu.diagnostics
    x = np.arange(32, dtype=np.uint32) * 3
    for name, want in ((f"k<{1}>", x + 1), (f"k<{0}>", np.full(32, 7, np.uint32))):
        got = run(src, name, block=(32,), o=np.zeros(32, np.uint32), **{"in": x})["o"]
        np.testing.assert_array_equal(got, want)


AMBIGUOUS = """
#define IN_RANGE(x, min, max) ((x)>=(min) && (x)<=(max))
#define CLAMP_LO(v, lo) ((v) < (lo) ? (lo) : (v))
__constant__ int bias = 5;
__global__ void k(int* o, const int* in, int n) {
    int tx = threadIdx.x;
    int lo = (n < 0) ? -n : 0;
    int a = (lo) && (tx);
    int b = (lo) + (tx);
    int c = (lo) -tx;
    int d = (lo) * *in;
    int e = (bias) & *in;
    int f = IN_RANGE(tx, lo, 20) ? CLAMP_LO(tx, lo) : -(lo);
    o[tx] = a + 10 * b + 100 * c + 1000 * d + 10000 * e + 100000 * f;
}
"""


def test_parenthesised_names_are_values_not_casts(parse) -> None:
    tu = parse(AMBIGUOUS)
    assert tu.rejected == {}, tu.diagnostics
    from cuda2nki.frontend.visit import find

    assert not find(tu.kernels[0].body, A.Cast)


def test_parenthesised_names_compute_as_c_does() -> None:
    from cuda2nki.frontend import parse_source
    from cuda2nki.simt import run_kernel

    tu = parse_source(AMBIGUOUS, "k.cu")
    got = run_kernel(
        tu,
        "k",
        grid=(1,),
        block=(32,),
        args={"o": np.zeros(32, np.int32), "in": np.array([6], np.int32), "n": -3},
    )["o"]
    tx, lo = np.arange(32), 3
    f = np.where((tx >= lo) & (tx <= 20), np.maximum(tx, lo), -lo)
    want = (
        ((lo != 0) & (tx != 0)).astype(int)
        + 10 * (lo + tx)
        + 100 * (lo - tx)
        + 1000 * lo * 6
        + 10000 * (5 & 6)
        + 100000 * f
    )
    np.testing.assert_array_equal(got, want)


def test_a_cast_to_a_type_stays_a_cast(parse) -> None:
    tu = parse(
        "typedef float real;\n"
        "__global__ void k(float* o, const int* p) { o[0] = (real) *p; o[1] = (real)(p[1] & 3); }\n"
    )
    assert tu.rejected == {}, tu.diagnostics
    from cuda2nki.frontend.visit import find

    assert len(find(tu.kernels[0].body, A.Cast)) >= 2


TYPEDEF_CASTS = """
typedef float real;
#define fp double
__global__ void k(float* o, const int* p, const float* q) {
    int i = threadIdx.x;
    o[i] = (real) *(p + i);
    o[i + 32] = (real) -q[i];
    o[i + 64] = (real) (fp) p[i] / q[i];
    o[i + 96] = (real) +q[i] * 2.0f;
}
"""


def test_casts_to_typedefs_read_as_binary_operators_are_casts() -> None:
    rng = np.random.default_rng(1)
    p = rng.integers(-50, 50, 32).astype(np.int32)
    q = (rng.random(32) + 0.5).astype(np.float32)
    got = run(TYPEDEF_CASTS, "k", block=(32,), o=np.zeros(128, np.float32), p=p, q=q)["o"]
    pf = p.astype(np.float32)
    want = np.concatenate([pf, -q, pf / q, q * np.float32(2)])
    np.testing.assert_array_equal(got, want)


DEFAULTS = """
__device__ float scaled(float x, float s = 2.0f, int shift = 1) { return x * s + shift; }
__device__ inline int clampi(int v, const int lo = 0, const int hi = 9) {
    return v < lo ? lo : (v > hi ? hi : v);
}
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
template <float (*op)(float)>
__device__ float reduce(float v, bool final_sync = false, float fill = 0.0f) {
    __shared__ float part[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float w = op(v);
    if (lane == 0) part[warp] = w;
    __syncthreads();
    float r = lane < blockDim.x / 32 ? part[lane] : fill;
    r = op(r);
    if (final_sync) __syncthreads();
    return r;
}
__global__ void k(float* o, const float* x, float* total, int n) {
    int i = threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    if (i < n) {
        o[i] = scaled(x[i]) + scaled(x[i], 3.0f) + scaled(x[i], 0.5f, -4) + clampi(i)
             + clampi(i, 4);
    }
    float s = reduce<warp_sum>(v);
    float s2 = reduce<warp_sum>(v, true);
    if (i == 0) { total[0] = s; total[1] = s2; }
}
"""


def test_default_arguments_fill_missing_ones() -> None:
    x = np.arange(40, dtype=np.float32) / 8
    got = run(
        DEFAULTS,
        "k",
        block=(64,),
        o=np.zeros(40, np.float32),
        x=x,
        total=np.zeros(2, np.float32),
        n=40,
    )
    i = np.arange(40)
    want = (x * 2 + 1) + (x * 3 + 1) + (x * np.float32(0.5) - 4) + np.clip(i, 0, 9)
    want = want + np.clip(i, 4, 9)
    np.testing.assert_allclose(got["o"], want.astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(got["total"], [x.sum(), x.sum()], rtol=1e-6)


def test_a_missing_argument_without_default_is_refused(parse) -> None:
    tu = parse(
        "__device__ float f(float x, float s, int k = 1) { return x * s + k; }\n"
        "__global__ void g(float* o) { o[0] = f(o[1]); }\n"
    )
    (d,) = tu.rejected["g"]
    assert (d.code, d.loc.line) == ("C2N1028", 2)


BF16_PAIRS = """
#include <cuda_bf16.h>
__global__ void k(__nv_bfloat162* out, const __nv_bfloat16* a, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* xa = (const float*)__builtin_assume_aligned(x, 16);
    if (__builtin_expect(i < n, 1)) {
        __nv_bfloat162 p = __halves2bfloat162(a[2 * i], __float2bfloat16(xa[i]));
        __nv_bfloat162 q = __floats2bfloat162_rn(1.0f, 2.0f);
        out[2 * i] = p;
        out[2 * i + 1] = __lows2bfloat162(p, q);
        out[2 * i] = i % 2 ? __highs2bfloat162(p, q) : p;
    }
}
"""


def test_bf16_pair_intrinsics_and_compiler_hints() -> None:
    import ml_dtypes

    bf = ml_dtypes.bfloat16
    n = 16
    a = (np.arange(2 * n) / 3).astype(bf)
    x = np.linspace(-2, 2, n).astype(np.float32)
    got = run(BF16_PAIRS, "k", block=(32,), out=np.zeros(4 * n, bf), a=a, x=x, n=n)["out"]
    got = got.reshape(n, 2, 2).astype(np.float32)
    p = np.stack([a[0::2].astype(np.float32), x.astype(bf).astype(np.float32)], axis=1)
    high = np.stack([p[:, 1], np.full(n, 2.0, np.float32)], axis=1)
    first = np.where((np.arange(n) % 2)[:, None] == 1, high, p)
    np.testing.assert_array_equal(got[:, 0], first)
    np.testing.assert_array_equal(got[:, 1], np.stack([p[:, 0], np.ones(n, np.float32)], 1))


HELPER_MATH = """
inline __host__ __device__ float3 make_float3(float s) { return make_float3(s, s, s); }
inline __host__ __device__ float3 make_float3(float4 a) { return make_float3(a.x, a.y, a.z); }
inline __host__ __device__ int3 make_int3(float3 a) {
    return make_int3(int(a.x), int(a.y), int(a.z));
}
__global__ void k(float* o, const float4* p, int n) {
    int i = threadIdx.x;
    if (i < n) {
        float3 a = make_float3(p[i]);
        float3 b = make_float3(2.0f);
        float3 c = make_float3(a.x + b.x, a.y * b.y, a.z - b.z);
        int3 g = make_int3(c);
        int3 h = make_int3(g.x, 1, 2);
        o[i] = c.x + c.y + c.z + g.x + h.y + h.z;
    }
}
"""


def test_header_overloads_of_an_intrinsic_keep_the_intrinsic() -> None:
    p = np.linspace(-3, 3, 40, dtype=np.float32).reshape(10, 4)
    got = run(HELPER_MATH, "k", block=(32,), o=np.zeros(10, np.float32), p=p.reshape(-1), n=10)
    c = np.stack([p[:, 0] + 2, p[:, 1] * 2, p[:, 2] - 2], axis=1)
    want = c[:, 0] + c[:, 1] + c[:, 2] + np.trunc(c[:, 0]) + 3
    np.testing.assert_allclose(got["o"], want, rtol=1e-6)


OUT_PARAMS = """
__device__ int log2_ceil(int n) {
    int exp;
    frexp((float)n, &exp);
    return exp;
}
__global__ void k(float* m, int* e, float* s, float* c, float* ip, float* fr, double* md,
                  const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int ex;
    m[i] = frexpf(x[i], &ex);
    e[i] = ex + 100 * log2_ceil(i + 1);
    sincosf(x[i], s + i, &c[i]);
    float whole;
    fr[i] = modff(x[i], &whole);
    ip[i] = whole;
    double dw;
    md[i] = modf((double)x[i] * 3.0, &dw) + dw;
}
"""


def test_math_with_out_parameters() -> None:
    x = np.concatenate([np.linspace(-7.5, 7.5, 60), [0.0, np.inf, -0.0, 1e-40]]).astype(np.float32)
    n = len(x)

    def z():
        return np.zeros(n, np.float32)

    got = run(
        OUT_PARAMS,
        "k",
        block=(64,),
        m=z(),
        e=np.zeros(n, np.int32),
        s=z(),
        c=z(),
        ip=z(),
        fr=z(),
        md=np.zeros(n),
        x=x,
        n=n,
    )
    mm, ee = np.frexp(x)
    np.testing.assert_array_equal(got["m"], mm)
    _, lg = np.frexp(np.arange(1, n + 1, dtype=np.float32))
    np.testing.assert_array_equal(got["e"], ee + 100 * lg)
    fin = np.isfinite(x)
    np.testing.assert_array_equal(
        got["s"][fin], np.sin(x[fin].astype(np.float64)).astype(np.float32)
    )
    np.testing.assert_array_equal(
        got["c"][fin], np.cos(x[fin].astype(np.float64)).astype(np.float32)
    )
    fr, whole = np.modf(x)
    np.testing.assert_array_equal(got["fr"], fr)
    np.testing.assert_array_equal(got["ip"], whole)
    np.testing.assert_array_equal(got["md"][fin], (x[fin].astype(np.float64) * 3.0))


TAGS = """
#include <type_traits>
template <bool Atomic>
__global__ void acc_kernel(float* out, const float* in, int n, std::bool_constant<Atomic>) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (Atomic) {
        atomicAdd(out, in[i]);
    } else {
        out[i] += in[i];
    }
}
template <int K>
__global__ void scale_kernel(float* out, int n, std::integral_constant<int, K>) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] *= K;
}
template <bool Neg>
__global__ void sign_kernel(float* out, int n, std::bool_constant<Neg> tag) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = Neg ? -out[i] : out[i];
}
void go(float* o, const float* in, int n) {
    acc_kernel<<<4, 32>>>(o, in, n, std::bool_constant<true>{});
    acc_kernel<<<4, 32>>>(o, in, n, std::bool_constant<false>{});
    scale_kernel<<<4, 32>>>(o, n, std::integral_constant<int, 3>{});
    sign_kernel<<<4, 32>>>(o, n, std::true_type{});
}
"""


def test_tag_types_deduce_template_constants(parse) -> None:
    from cuda2nki.simt import run_kernel

    tu = parse(TAGS)
    assert tu.rejected == {}, tu.diagnostics
    names = sorted(k.name for k in tu.kernels)
    assert names == ["acc_kernel<0>", "acc_kernel<1>", "scale_kernel", "sign_kernel"]
    x = np.arange(1, 41, dtype=np.float32)

    def go(name, **args):
        return run_kernel(tu, name, grid=(2,), block=(32,), args=args)

    got = go("acc_kernel<1>", out=np.zeros(40, np.float32), **{"in": x}, n=40, __unnamed3=1)
    assert got["out"][0] == x.sum() and not got["out"][1:].any()
    got = go("acc_kernel<0>", out=np.ones(40, np.float32), **{"in": x}, n=40, __unnamed3=0)
    np.testing.assert_array_equal(got["out"], x + 1)
    got = go("scale_kernel", out=x.copy(), n=40, __unnamed2=3)
    np.testing.assert_array_equal(got["out"], 3 * x)
    (sign,) = [k for k in tu.kernels if k.name == "sign_kernel"]
    assert sign.template_args == (("Neg", True),) or sign.template_args == (("Neg", 1),)
