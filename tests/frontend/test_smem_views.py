"""Shared-memory view structs (the SDK's ``SharedMemory<T>`` in its spellings) are the launch's
dynamic shared memory as a ``T`` array."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.visit import find
from cuda2nki.simt import run_kernel

CONVERSION = """
template <class T> struct SharedMemory {
    __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }
    __device__ inline operator const T *() const {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};
template <> struct SharedMemory<double> {
    __device__ inline operator double *() {
        extern __shared__ double __smem_d[];
        return (double *)__smem_d;
    }
};
template <class T> __global__ void reduce0(const T* g_idata, T* g_odata, unsigned int n) {
    T* sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
void go(float* a, float* b, double* c, double* d, int n) {
    reduce0<float><<<4, 64, 64 * sizeof(float)>>>(a, b, n);
    reduce0<double><<<4, 64, 64 * sizeof(double)>>>(c, d, n);
}
"""

METHODS = """
template <typename T> struct SharedMemory {
    __device__ T *getPointer() { extern __device__ void error(void); error(); return NULL; }
};
template <> struct SharedMemory<int> {
    __device__ int *getPointer() { extern __shared__ int s_int[]; return s_int; }
};
template <> struct SharedMemory<float> {
    __device__ float *getPointer() { extern __shared__ float s_float[]; return s_float; }
};
#define BUILD_SHAREDMEMORY_TYPE(t, n) \\
    template <> struct Shared2<t> { \\
        __device__ t &operator*() { extern __shared__ t n[]; return *n; } \\
        __device__ t &operator[](int i) { extern __shared__ t n[]; return n[i]; } \\
    }
template <typename T> struct Shared2 {
    virtual __device__ T &operator*() = 0;
    virtual __device__ T &operator[](int i) = 0;
};
BUILD_SHAREDMEMORY_TYPE(float, s_f);
BUILD_SHAREDMEMORY_TYPE(double, s_d);

template <class T> __global__ void rev(T* g, int n) {
    SharedMemory<T> smem;
    T* s = smem.getPointer();
    int t = threadIdx.x;
    s[t] = t < n ? g[t] : 0;
    __syncthreads();
    if (t < n) g[t] = s[n - 1 - t];
}
template <class T> __global__ void sum2(const T* g, T* out) {
    Shared2<T> sdata;
    int t = threadIdx.x;
    sdata[t] = g[t];
    __syncthreads();
    if (t == 0) {
        T acc = *sdata;
        for (int i = 1; i < blockDim.x; i++) acc += sdata[i];
        out[0] = acc;
    }
}
void go(float* a, int* b, float* c, double* d, float* o, double* od) {
    rev<float><<<1, 32, 128>>>(a, 20);
    rev<int><<<1, 32, 128>>>(b, 20);
    sum2<float><<<1, 32, 128>>>(c, o);
    sum2<double><<<1, 32, 256>>>(d, od);
}
"""


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_conversion_operator_view_reduces(dt) -> None:
    tu = parse_source(CONVERSION, "k.cu")
    assert tu.rejected == {}, tu.diagnostics
    name = "reduce0<float32>" if dt == np.float32 else "reduce0<float64>"
    x = np.random.default_rng(0).standard_normal(200).astype(dt)
    got = run_kernel(
        tu,
        name,
        grid=(4,),
        block=(64,),
        shared_bytes=64 * np.dtype(dt).itemsize,
        args={"g_idata": x, "g_odata": np.zeros(4, dt), "n": 200},
    )["g_odata"]
    want = [x[b * 64 : (b + 1) * 64].astype(np.float64).sum() for b in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    (k,) = [f for f in tu.kernels if f.name == name]
    (decl,) = [d for d in find(k.body, A.VarDecl) if d.storage == "extern_shared"]
    assert decl.ty == A.ArrayType(elem=A.ScalarType(name=np.dtype(dt).name), dims=(None,))


def test_method_and_operator_views() -> None:
    tu = parse_source(METHODS, "k.cu")
    assert tu.rejected == {}, tu.diagnostics
    for name, dt in (("rev<float32>", np.float32), ("rev<int32>", np.int32)):
        g = np.arange(32).astype(dt)
        got = run_kernel(
            tu, name, grid=(1,), block=(32,), shared_bytes=128, args={"g": g, "n": 20}
        )["g"]
        np.testing.assert_array_equal(got, np.concatenate([g[:20][::-1], g[20:]]))
    for name, dt in (("sum2<float32>", np.float32), ("sum2<float64>", np.float64)):
        g = np.linspace(0, 1, 32).astype(dt)
        got = run_kernel(
            tu,
            name,
            grid=(1,),
            block=(32,),
            shared_bytes=256,
            args={"g": g, "out": np.zeros(1, dt)},
        )["out"]
        np.testing.assert_allclose(got, [g.astype(np.float64).sum()], rtol=1e-6)


def test_a_struct_with_other_members_is_no_view() -> None:
    src = (
        "template <class T> struct Holder {\n  int n;\n"
        "  __device__ operator T*() { extern __shared__ int s[]; return (T*)s; }\n};\n"
        "__global__ void k(float* o) { float* p = Holder<float>(); o[0] = p[0]; }\n"
    )
    tu = parse_source(src, "k.cu")
    assert "k" in tu.rejected
