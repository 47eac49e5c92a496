"""Kernels in the style of real code (llm.c softmax/layernorm, block scan) against NumPy."""

from __future__ import annotations

import numpy as np
from simt_helpers import run

SOFTMAX4 = r"""
__device__ float warpReduceMax(float val) {
    for (int offset = 16; offset > 0; offset /= 2) val = fmaxf(val, __shfl_down_sync(0xFFFFFFFF, val, offset));
    return val;
}
__device__ float warpReduceSum(float val) {
    for (int offset = 16; offset > 0; offset /= 2) val += __shfl_down_sync(0xFFFFFFFF, val, offset);
    return val;
}
__global__ void softmax_forward_kernel4(float* out, const float* inp, int N, int C) {
    extern __shared__ float shared[];
    int idx = blockIdx.x;
    int tid = threadIdx.x;
    int warpId = threadIdx.x / 32;
    int laneId = threadIdx.x % 32;
    int warpsPerBlock = blockDim.x / 32;
    float* maxvals = shared;
    float* sumvals = &shared[warpsPerBlock];
    const float* x = inp + idx * C;
    float maxval = -INFINITY;
    for (int i = tid; i < C; i += blockDim.x) maxval = fmaxf(maxval, x[i]);
    maxval = warpReduceMax(maxval);
    if (laneId == 0) maxvals[warpId] = maxval;
    __syncthreads();
    if (tid == 0) {
        float val = maxvals[tid];
        for (int i = 1; i < warpsPerBlock; i++) val = fmaxf(val, maxvals[i]);
        maxvals[0] = val;
    }
    __syncthreads();
    float offset = maxvals[0];
    for (int i = tid; i < C; i += blockDim.x) out[idx * C + i] = expf(x[i] - offset);
    x = out + idx * C;
    float sumval = 0.0f;
    for (int i = tid; i < C; i += blockDim.x) sumval += x[i];
    sumval = warpReduceSum(sumval);
    if (laneId == 0) sumvals[warpId] = sumval;
    __syncthreads();
    if (tid == 0) {
        float val = sumvals[tid];
        for (int i = 1; i < warpsPerBlock; ++i) val += sumvals[i];
        sumvals[0] = val;
    }
    __syncthreads();
    float sum = sumvals[0];
    for (int i = tid; i < C; i += blockDim.x) out[idx * C + i] = x[i] / sum;
}
"""

SCAN = r"""
__global__ void scan(const int* in, int* out, int n) {
    extern __shared__ int temp[];
    int thid = threadIdx.x;
    int pout = 0, pin = 1;
    temp[pout * n + thid] = (thid > 0) ? in[thid - 1] : 0;
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) {
        pout = 1 - pout; pin = 1 - pout;
        if (thid >= offset) temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
        else temp[pout * n + thid] = temp[pin * n + thid];
        __syncthreads();
    }
    out[thid] = temp[pout * n + thid];
}
"""

LAYERNORM = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void layernorm_forward_kernel3(float* __restrict__ out, float* __restrict__ mean, float* __restrict__ rstd,
                                    const float*  __restrict__ inp, const float*  __restrict__ weight,
                                    const float* __restrict__ bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if(idx >= N) return;
    const float* x = inp + idx * C;
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) sum += x[i];
    sum = cg::reduce(warp, sum, cg::plus<float>{});
    float m = sum / C;
    if(warp.thread_rank() == 0 && mean != nullptr) __stcs(mean + idx, m);
    sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) { float diff = x[i] - m; sum += diff * diff; }
    sum = cg::reduce(warp, sum, cg::plus<float>{});
    float s = rsqrtf(sum / C + 1e-5f);
    if(warp.thread_rank() == 0 && rstd != nullptr) __stcs(rstd + idx, s);
    float* o = out + idx * C;
    for (int c = warp.thread_rank(); c < C; c += warp.size()) {
        float n = s * (__ldcs(x+c) - m);
        __stcs(o+c, n * weight[c] + bias[c]);
    }
}
"""


def test_llmc_style_softmax_with_warp_reductions() -> None:
    rng = np.random.default_rng(0)
    n, c = 37, 301
    inp = rng.standard_normal(n * c).astype(np.float32)
    out = run(
        SOFTMAX4,
        grid=(n,),
        block=(128,),
        shared_bytes=2 * 4 * 4,
        out=np.zeros(n * c, np.float32),
        inp=inp,
        N=n,
        C=c,
    )["out"]
    x = inp.reshape(n, c).astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out.reshape(n, c), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_hillis_steele_block_scan_double_buffered() -> None:
    n = 256
    a = np.random.default_rng(1).integers(0, 10, n).astype(np.int32)
    o = run(SCAN, block=(n,), shared_bytes=2 * n * 4, **{"in": a}, out=np.zeros(n, np.int32), n=n)[
        "out"
    ]
    np.testing.assert_array_equal(o, np.concatenate([[0], np.cumsum(a)[:-1]]))


def test_cooperative_groups_layernorm_one_warp_per_row() -> None:
    rng = np.random.default_rng(2)
    n, c = 19, 77
    inp = rng.standard_normal(n * c).astype(np.float32)
    w, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    res = run(
        LAYERNORM,
        grid=((n * 32 + 127) // 128,),
        block=(128,),
        out=np.zeros(n * c, np.float32),
        mean=np.zeros(n, np.float32),
        rstd=np.zeros(n, np.float32),
        inp=inp,
        weight=w,
        bias=b,
        N=n,
        C=c,
    )
    x = inp.reshape(n, c).astype(np.float64)
    m = x.mean(1)
    s = 1 / np.sqrt(((x - m[:, None]) ** 2).mean(1) + 1e-5)
    np.testing.assert_allclose(res["mean"], m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res["rstd"], s, rtol=1e-5)
    np.testing.assert_allclose(
        res["out"].reshape(n, c), (x - m[:, None]) * s[:, None] * w + b, rtol=1e-5, atol=1e-5
    )
