"""Shared memory, barriers, poison, vector loads, local arrays, and memory-fault diagnostics."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from simt_helpers import fault, run

REDUCE = """
__global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
"""


def _tree_sum(v: np.ndarray) -> np.float32:
    v = v.astype(np.float32).copy()
    n = len(v)
    while n > 1:
        n //= 2
        v[:n] = v[:n] + v[n : 2 * n]
    return v[0]


def test_shared_tree_reduction_rounds_in_tree_order() -> None:
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    out = run(REDUCE, grid=(4,), block=(256,), x=x, out=np.zeros(4, np.float32), n=1000)["out"]
    pad = np.zeros(1024, np.float32)
    pad[:1000] = x
    ref = [_tree_sum(pad[b * 256 : (b + 1) * 256]) for b in range(4)]
    np.testing.assert_array_equal(out, ref)


def test_extern_shared_and_2d_shared_transpose() -> None:
    src = """
    #define TILE 8
    __global__ void tr(const float* in, float* out, int rows, int cols) {
        __shared__ float tile[TILE][TILE + 1];
        extern __shared__ float scratch[];
        int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
        if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
        scratch[threadIdx.y * TILE + threadIdx.x] = 1.0f;
        __syncthreads();
        x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
        if (x < rows && y < cols)
            out[y * rows + x] = tile[threadIdx.x][threadIdx.y] * scratch[threadIdx.x * TILE + threadIdx.y];
    }"""
    rows, cols = 13, 21
    a = np.arange(rows * cols, dtype=np.float32)
    out = run(
        src,
        grid=(3, 2),
        block=(8, 8),
        shared_bytes=64 * 4,
        **{"in": a},
        out=np.zeros(rows * cols, np.float32),
        rows=rows,
        cols=cols,
    )["out"]
    np.testing.assert_array_equal(out.reshape(cols, rows), a.reshape(rows, cols).T)


def test_unwritten_shared_reads_are_poisoned_nan() -> None:
    src = """
    __global__ void k(float* out) {
        __shared__ float s[64];
        if (threadIdx.x < 16) s[threadIdx.x] = 1.0f;
        __syncthreads();
        out[threadIdx.x] = s[threadIdx.x];
    }"""
    out = run(src, block=(32,), out=np.zeros(32, np.float32))["out"]
    assert np.all(out[:16] == 1.0) and np.all(np.isnan(out[16:]))
    out = run(src, block=(32,), poison=False, out=np.zeros(32, np.float32))["out"]
    assert np.all(out[16:] == 0.0)


def test_shared_memory_is_per_block() -> None:
    src = """
    __global__ void k(int* out) {
        __shared__ int s;
        if (threadIdx.x == 0) s = blockIdx.x * 100;
        __syncthreads();
        out[blockIdx.x * blockDim.x + threadIdx.x] = s + threadIdx.x;
    }"""
    out = run(src, grid=(3,), block=(4,), out=np.zeros(12, np.int32))["out"]
    np.testing.assert_array_equal(out, [b * 100 + t for b in range(3) for t in range(4)])


def test_divergent_syncthreads_is_reported() -> None:
    src = """
    __global__ void k(float* x) {
        if (threadIdx.x < 8) { __syncthreads(); x[threadIdx.x] = 1.0f; }
    }"""
    res = run(src, block=(32,), full=True, x=np.zeros(32, np.float32))
    assert [d.code for d in res.diagnostics] == ["C2N1504"]
    assert res.diagnostics[0].loc.line == 3
    # threads that returned early do not count against the barrier
    src2 = """
    __global__ void k(float* x, int n) {
        if (threadIdx.x >= n) return;
        __syncthreads();
        x[threadIdx.x] = 1.0f;
    }"""
    res = run(src2, block=(32,), full=True, x=np.zeros(32, np.float32), n=10)
    assert res.diagnostics == []


def test_float4_vectorised_loads_and_stores() -> None:
    src = """
    __global__ void k(const float* x, float* y, int n4) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n4) {
            float4 v = reinterpret_cast<const float4*>(x)[i];
            float4 r = make_float4(v.x * 2.0f, v.y + 1.0f, -v.z, v.w);
            r.w += 0.5f;
            reinterpret_cast<float4*>(y)[i] = r;
        }
    }"""
    x = np.arange(40, dtype=np.float32)
    y = run(src, grid=(1,), block=(16,), x=x, y=np.zeros(40, np.float32), n4=10)["y"].reshape(10, 4)
    xv = x.reshape(10, 4)
    np.testing.assert_array_equal(
        y, np.stack([xv[:, 0] * 2, xv[:, 1] + 1, -xv[:, 2], xv[:, 3] + 0.5], 1)
    )


def test_misaligned_float4_load_is_diagnosed() -> None:
    src = """
    __global__ void k(const float* x, float* y) {
        float4 v = reinterpret_cast<const float4*>(x + 1)[threadIdx.x];
        y[threadIdx.x] = v.x;
    }"""
    d = fault(src, block=(2,), x=np.zeros(16, np.float32), y=np.zeros(2, np.float32))
    assert d.code == "C2N1501" and d.loc.line == 3


GATHERED_FLOAT4 = """
__global__ void k(const float* x, const int* idx, float* y) {
    int t = threadIdx.x;
    float4 v = *reinterpret_cast<const float4*>(x + idx[t]);
    y[t] = v.x + v.w;
}"""


def _gathered_float4(idx: list[int]):
    x = np.arange(64, dtype=np.float32)
    ix = np.array(idx, np.int32)
    return x, ix, dict(block=(len(idx),), x=x, idx=ix, y=np.zeros(len(idx), np.float32))


def test_per_thread_offsets_aligned_to_the_vector_load() -> None:
    """Data-dependent offsets (one per thread, no affine form): every multiple of 4 floats is
    aligned for float4, whatever its other bits."""
    x, ix, kw = _gathered_float4([0, 12, 4, 40, 28, 8, 60, 16])
    y = run(GATHERED_FLOAT4, **kw)["y"]
    np.testing.assert_array_equal(y, x[ix] + x[ix + 3])


def test_one_thread_misaligned_among_per_thread_offsets() -> None:
    """Offsets aligned to the lane (8 bytes) but not to float4 (16) in one thread only: the fault
    names that thread."""
    for bad in (1, 5, 7):
        idx = [0, 12, 4, 40, 28, 8, 60, 16]
        idx[bad] += 2
        _, _, kw = _gathered_float4(idx)
        d = fault(GATHERED_FLOAT4, **kw)
        assert d.code == "C2N1501" and d.loc.line == 4, d.message
        assert f"thread {bad}" in d.message or f"({bad}, 0, 0)" in d.message, d.message


def test_local_arrays_are_per_thread() -> None:
    src = """
    __global__ void k(int* out) {
        int buf[4] = {0};
        for (int j = 0; j < 4; ++j) buf[j] = threadIdx.x * j;
        int s = 0;
        #pragma unroll
        for (int j = 3; j >= 0; --j) s = s * 2 + buf[(j + threadIdx.x) % 4];
        out[threadIdx.x] = s;
    }"""
    out = run(src, block=(8,), out=np.zeros(8, np.int32))["out"]
    ref = []
    for t in range(8):
        buf = [t * j for j in range(4)]
        s = 0
        for j in range(3, -1, -1):
            s = s * 2 + buf[(j + t) % 4]
        ref.append(s)
    np.testing.assert_array_equal(out, ref)


def test_half_and_bf16_storage_with_fp32_math() -> None:
    src = """
    #include <cuda_fp16.h>
    #include <cuda_bf16.h>
    __global__ void k(const __half* h, const __nv_bfloat16* b, __half* ho, __nv_bfloat16* bo, float* f) {
        int i = threadIdx.x;
        float x = __half2float(h[i]);
        float y = __bfloat162float(b[i]);
        f[i] = x * y + 1.0f;
        ho[i] = __float2half(x * 3.0f);
        bo[i] = __float2bfloat16(y / 3.0f);
    }"""
    rng = np.random.default_rng(3)
    h = rng.standard_normal(32).astype(np.float16)
    b = rng.standard_normal(32).astype(ml_dtypes.bfloat16)
    res = run(
        src,
        h=h,
        b=b,
        ho=np.zeros(32, np.float16),
        bo=np.zeros(32, ml_dtypes.bfloat16),
        f=np.zeros(32, np.float32),
    )
    hf, bf = h.astype(np.float32), b.astype(np.float32)
    np.testing.assert_array_equal(res["f"], hf * bf + np.float32(1))
    np.testing.assert_array_equal(res["ho"], (hf * np.float32(3)).astype(np.float16))
    assert res["bo"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(res["bo"], (bf / np.float32(3)).astype(ml_dtypes.bfloat16))


def test_constant_memory_globals() -> None:
    src = """
    __constant__ float coef[3] = {0.25f, 0.5f, 0.25f};
    __global__ void k(const float* x, float* y, int n) {
        int i = threadIdx.x;
        if (i > 0 && i < n - 1) y[i] = coef[0] * x[i - 1] + coef[1] * x[i] + coef[2] * x[i + 1];
    }"""
    x = np.arange(10, dtype=np.float32) ** 2
    y = run(src, block=(10,), x=x, y=np.zeros(10, np.float32), n=10)["y"]
    ref = np.zeros(10, np.float32)
    ref[1:-1] = np.float32(0.25) * x[:-2] + np.float32(0.5) * x[1:-1] + np.float32(0.25) * x[2:]
    np.testing.assert_array_equal(y, ref)


def test_out_of_bounds_global_read_names_line_block_thread_index() -> None:
    src = """
    __global__ void k(const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        y[i] = x[i + 1];
    }"""
    d = fault(
        src, grid=(2,), block=(8,), x=np.zeros(16, np.float32), y=np.zeros(16, np.float32), n=16
    )
    assert d.code == "C2N1500"
    assert d.loc.line == 4
    assert "'x'" in d.message and "element 16" in d.message
    assert "block (1, 0, 0)" in d.message and "thread (7, 0, 0)" in d.message


def test_out_of_bounds_shared_write_is_diagnosed() -> None:
    src = """
    __global__ void k(float* y) {
        __shared__ float s[16];
        s[threadIdx.x] = 1.0f;
        __syncthreads();
        y[threadIdx.x] = s[0];
    }"""
    d = fault(src, block=(20,), y=np.zeros(20, np.float32))
    assert d.code == "C2N1500" and d.loc.line == 4
    assert "shared write of 's'" in d.message and "thread (16, 0, 0)" in d.message


def test_integer_division_by_zero_is_diagnosed() -> None:
    src = """
    __global__ void k(const int* a, int* b) {
        b[threadIdx.x] = 100 / a[threadIdx.x];
    }"""
    d = fault(src, block=(4,), a=np.array([1, 2, 0, 4], np.int32), b=np.zeros(4, np.int32))
    assert d.code == "C2N1503" and d.loc.line == 3 and "thread (2, 0, 0)" in d.message


def test_missing_argument_and_unknown_kernel() -> None:
    src = "__global__ void k(float* y, int n) { y[0] = n; }"
    d = fault(src, y=np.zeros(1, np.float32))
    assert d.code == "C2N1508" and "'n'" in d.message
    d = fault(src, "nope", y=np.zeros(1, np.float32), n=1)
    assert d.code == "C2N1506"
    d = fault(src, block=(2048,), y=np.zeros(1, np.float32), n=1)
    assert d.code == "C2N1507"


def test_array_dtype_must_match_pointee() -> None:
    src = "__global__ void k(int* a, unsigned char* raw) { a[0] = 1; raw[0] = 2; }"
    d = fault(src, block=(1,), a=np.zeros(4, np.float32), raw=np.zeros(4, np.float32))
    assert d.code == "C2N1508" and "'a'" in d.message and "float32" in d.message
    out = run(src, block=(1,), a=np.zeros(4, np.int32), raw=np.zeros(1, np.float32))
    assert out["a"][0] == 1 and out["raw"].view(np.uint8)[0] == 2


def test_caller_arrays_are_not_modified_and_aliasing_is_kept() -> None:
    src = """
    __global__ void k(float* x, float* y) {
        int t = threadIdx.x;
        y[t] = x[t] + 1.0f;
    }"""
    x = np.arange(8, dtype=np.float32)
    keep = x.copy()
    out = run(src, block=(8,), x=x, y=x)  # in-place through two pointers to one buffer
    np.testing.assert_array_equal(x, keep)
    np.testing.assert_array_equal(out["y"], keep + 1)
    np.testing.assert_array_equal(out["x"], keep + 1)


def test_pointer_null_checks_and_comparisons() -> None:
    src = """
    __global__ void k(float* out, float* maybe, const float* x) {
        int t = threadIdx.x;
        if (maybe != nullptr && t == 0) maybe[0] = 5.0f;
        const float* p = x + t;
        const float* q = x + 2;
        out[t] = (p < q) + 2 * (p == q) + 4 * (maybe == 0) + 8 * (p != nullptr);
    }"""
    x = np.zeros(4, np.float32)
    res = run(src, block=(4,), out=np.zeros(4, np.float32), maybe=np.zeros(1, np.float32), x=x)
    assert res["maybe"][0] == 5.0
    np.testing.assert_array_equal(res["out"], [9, 9, 10, 8])
    res = run(src, block=(4,), out=np.zeros(4, np.float32), maybe=None, x=x)
    np.testing.assert_array_equal(res["out"], [13, 13, 14, 12])


def test_device_globals_persist_across_blocks_and_are_reported() -> None:
    src = """
    __device__ unsigned int done = 0;
    __device__ float total[2];
    __global__ void k(const float* x, float* out, int nblocks) {
        __shared__ bool last;
        atomicAdd(&total[0], x[blockIdx.x * blockDim.x + threadIdx.x]);
        __threadfence();
        if (threadIdx.x == 0) last = (atomicInc(&done, nblocks) == nblocks - 1);
        __syncthreads();
        if (last && threadIdx.x == 0) out[0] = total[0];
    }"""
    x = np.arange(64, dtype=np.float32)
    res = run(src, grid=(4,), block=(16,), full=True, x=x, out=np.zeros(1, np.float32), nblocks=4)
    assert res.outputs["out"][0] == x.sum()
    assert res.globals["done"][0] == 4 and res.globals["total"][0] == x.sum()


PACKED = """
template <typename E>
struct alignas(16) Pk { static constexpr int lanes = 16 / sizeof(E); E d[lanes];
    __device__ E& operator[](int j) { return d[j]; } };
template <typename E>
__device__ Pk<E> ld(const E* p) { return *reinterpret_cast<const Pk<E>*>(p); }
template <typename E>
__device__ void st(E* p, Pk<E> v) { *reinterpret_cast<Pk<E>*>(p) = v; }
__global__ void rot(float* out, const float* in) {
    int t = threadIdx.x;
    Pk<float> a = ld(in + 4 * t);
    Pk<float> b;
    for (int k = 0; k < Pk<float>::lanes; ++k) b[k] = a[(k + t) % 4] + ld(in)[t % 4];
    st(out + 4 * t, b);
}
"""


def test_packed_struct_lanes_with_per_thread_index() -> None:
    x = np.arange(32 * 4, dtype=np.float32)
    out = run(PACKED, block=(32,), out=np.zeros(128, np.float32), **{"in": x})["out"]
    rows = x.reshape(32, 4)
    ref = np.stack([np.roll(rows[t], -t) + x[t % 4] for t in range(32)])
    np.testing.assert_array_equal(out.reshape(32, 4), ref)


@pytest.mark.parametrize(
    "host_table",
    [
        'const char *modes[] = {"auto", "spin", "yield", NULL};',
        'static const char* const names[] = {"a", "b"};',
        'const char *labels[3] = {"x", "y", "z"};',
    ],
)
def test_a_host_table_of_unknown_size_does_not_stop_a_kernel(host_table: str) -> None:
    """A host-only table the front end cannot size (strings) is no device memory: a kernel
    that never reads it runs."""
    src = (
        f"{host_table}\n"
        "__global__ void scale(int* d, const int* f) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  d[i] = d[i] * f[0];\n}\n"
    )
    d = np.arange(32, dtype=np.int32)
    out = run(src, "scale", d=d, f=np.array([3], np.int32))
    np.testing.assert_array_equal(out["d"], np.arange(32, dtype=np.int32) * 3)
