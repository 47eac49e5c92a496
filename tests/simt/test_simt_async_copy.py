"""Asynchronous copies (cuda::memcpy_async, __pipeline_memcpy_async) with pipelines and barriers,
``alignof`` and ``cg::block_tile_memory``: lowered to plain copies and block barriers."""

from __future__ import annotations

import numpy as np
import pytest
from simt_helpers import run

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.visit import find

HEAD = """
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define BS 8
"""

PIPE = (
    HEAD
    + """
__global__ void k(float *out, const float *in, int n) {
    __shared__ alignas(alignof(float4)) float tile[2][BS * 4];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    const auto shape4 = cuda::aligned_size_t<alignof(float4)>(sizeof(float4));
    int base = blockIdx.x * BS * 4;
    pipe.producer_acquire();
    cuda::memcpy_async(&tile[0][threadIdx.x * 4], &in[base + threadIdx.x * 4], SIZE, pipe);
    pipe.producer_commit();
    WAIT;
    __syncthreads();
    for (int k = 0; k < 4; k++)
        out[base + threadIdx.x * 4 + k] = tile[0][(threadIdx.x * 4 + k + 4) % (BS * 4)] * 2.0f;
    pipe.consumer_release();
}
"""
)


@pytest.mark.parametrize(
    ("size", "wait"),
    [
        ("shape4", "pipe.consumer_wait()"),
        ("sizeof(float4)", "cuda::pipeline_consumer_wait_prior<0>(pipe)"),
        ("cuda::aligned_size_t<16>(16)", "pipe.consumer_wait()"),
        ("cuda::aligned_size_t<16>{16}", "pipe.consumer_wait()"),
        ("cuda::aligned_size_t<alignof(float4)>{4 * sizeof(float)}", "pipe.consumer_wait()"),
        ("4 * sizeof(float)", "pipe.consumer_wait()"),
    ],
)
def test_pipeline_copies_complete_by_the_wait(size: str, wait: str) -> None:
    src = PIPE.replace("SIZE", size).replace("WAIT", wait)
    x = np.arange(64, dtype=np.float32)
    got = run(src, "k", grid=(2,), block=(8,), out=np.zeros_like(x), n=64, **{"in": x})
    want = np.concatenate([np.roll(x[b * 32 : (b + 1) * 32], -4) * 2 for b in range(2)])
    assert np.array_equal(got["out"], want)


def test_a_constant_size_copy_is_an_assignment() -> None:
    tu = parse_source(
        PIPE.replace("SIZE", "shape4").replace("WAIT", "pipe.consumer_wait()"), "p.cu"
    )
    assigns = [a for a in find(tu.kernels[0].body, A.Assign) if a.ty is not None]
    assert any(getattr(a.ty, "name", "") == "float4" for a in assigns)
    calls = {c.func for c in find(tu.kernels[0].body, A.Call)}
    assert "__c2n_memcpy" not in calls


BARRIER = (
    HEAD
    + """
__device__ void load(float *dst, const float *src, BARRIER_T &bar) {
    cuda::memcpy_async(dst, src, sizeof(float), bar);
}
__global__ void k(float *out, const float *in, int n) {
    __shared__ cuda::barrier<cuda::thread_scope_block> front, back;
    __shared__ float tile[2][BS];
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) { init(&front, block.size()); init(&back, block.size()); }
    __syncthreads();
    auto fp = &front;
    auto bp = &back;
    load(&tile[0][threadIdx.x], &in[blockIdx.x * BS + threadIdx.x], *fp);
    load(&tile[1][threadIdx.x], &in[gridDim.x * BS + blockIdx.x * BS + threadIdx.x], *bp);
    fp->arrive_and_wait();
    float v = tile[0][(threadIdx.x + 1) % BS];
    auto token = (*bp).arrive();
    bp->wait(std::move(token));
    out[blockIdx.x * BS + threadIdx.x] = v + tile[1][(threadIdx.x + 2) % BS];
}
"""
)


@pytest.mark.parametrize(
    "barrier_t",
    [
        "cuda::barrier<cuda::thread_scope_block>",
        "cuda::barrier<cuda::thread_scope::thread_scope_block>",
    ],
)
def test_barriers_wait_for_the_block(barrier_t: str) -> None:
    src = BARRIER.replace("BARRIER_T", barrier_t)
    x = np.arange(32, dtype=np.float32)
    got = run(src, "k", grid=(2,), block=(8,), out=np.zeros(16, np.float32), n=32, **{"in": x})
    lo, hi = x[:16].reshape(2, 8), x[16:].reshape(2, 8)
    want = (np.roll(lo, -1, axis=1) + np.roll(hi, -2, axis=1)).ravel()
    assert np.array_equal(got["out"], want)


def test_pipeline_primitives_copy_any_size() -> None:
    src = (
        HEAD
        + """
__global__ void k(float *out, const float *in, int n) {
    __shared__ float tile[BS * 3];
    __pipeline_memcpy_async(&tile[threadIdx.x * 3], &in[blockIdx.x * BS * 3 + threadIdx.x * 3], 12);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    for (int k = 0; k < 3; k++)
        out[blockIdx.x * BS * 3 + threadIdx.x * 3 + k] = tile[(threadIdx.x * 3 + k + 3) % (BS * 3)];
}
"""
    )
    x = np.arange(48, dtype=np.float32)
    got = run(src, "k", grid=(2,), block=(8,), out=np.zeros_like(x), n=48, **{"in": x})
    want = np.concatenate([np.roll(x[b * 24 : (b + 1) * 24], -3) for b in range(2)])
    assert np.array_equal(got["out"], want)


def test_alignof_and_block_tile_memory() -> None:
    src = (
        HEAD
        + """
struct Pair { float a; float b; };
__global__ void k(unsigned long long *out) {
    __shared__ cg::block_tile_memory<64> scratch;
    cg::thread_block thb = cg::this_thread_block(scratch);
    out[0] = alignof(float4); out[1] = alignof(float); out[2] = alignof(double2);
    out[3] = alignof(float3); out[4] = alignof(Pair); out[5] = alignof(int[4]);
    out[6] = thb.size();
}
"""
    )
    got = run(src, "k", block=(4,), out=np.zeros(7, np.uint64))
    assert got["out"].tolist() == [16, 4, 16, 4, 4, 4, 4]


def test_pipelines_shared_by_a_group_are_refused() -> None:
    body = (
        "__shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> st;\n"
        "    auto pipe = cuda::make_pipeline(cg::this_thread_block(), &st);"
    )
    src = HEAD + f"__global__ void k(float *y, const float *x) {{\n    {body}\n}}\n"
    tu = parse_source(src, "g.cu")
    diags = tu.rejected["k"]
    assert diags[0].code == "C2N1018" and "shared by a group" in diags[0].message


GROUP = (
    HEAD
    + """
__global__ void k(const float *in, float *out, int n) {
    __shared__ float stage[64];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    cg::thread_block block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    int base = blockIdx.x * 64;
    COPY;
    WAIT;
    int i = base + threadIdx.x;
    if (i < n) out[i] = stage[threadIdx.x] + stage[63 - threadIdx.x];
}
"""
)


@pytest.mark.parametrize(
    ("copy", "wait"),
    [
        ("cg::memcpy_async(block, stage, in + base, sizeof(float) * 64)", "cg::wait(block)"),
        (
            "cg::memcpy_async(cg::this_thread_block(), stage, &in[base], 256)",
            "cg::wait_prior<0>(block)",
        ),
        (
            "cuda::memcpy_async(block, stage, in + base, sizeof(float) * 64, bar)",
            "bar.arrive_and_wait()",
        ),
    ],
)
def test_a_copy_by_the_block_is_seen_after_its_wait(copy: str, wait: str) -> None:
    src = GROUP.replace("COPY", copy).replace("WAIT", wait)
    x = np.arange(128, dtype=np.float32)
    got = run(src, "k", grid=(2,), block=(64,), out=np.zeros_like(x), n=128, **{"in": x})
    blocks = x.reshape(2, 64)
    assert np.array_equal(got["out"], (blocks + blocks[:, ::-1]).ravel())


STAGED = """
#include <cuda/pipeline>
__global__ void k(float *out, const float *in, float alpha, int n) {
    __shared__ float stage[128];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    const int i = blockIdx.x * 128 + threadIdx.x;
    pipe.producer_acquire();
    if (i < n) cuda::memcpy_async(&stage[threadIdx.x], &in[i], SIZE, pipe);
    pipe.producer_commit();
    WAIT;
    __syncthreads();
    if (i < n) out[i] = alpha * stage[threadIdx.x];
    pipe.consumer_release();
}
"""
_B = {
    "kernel": "k",
    "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
    "params": {
        "out": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "in": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "alpha": 2.0,
        "n": 1000,
    },
}


@pytest.mark.parametrize(
    ("size", "wait"),
    [
        ("sizeof(float)", "pipe.consumer_wait()"),
        ("cuda::aligned_size_t<alignof(float)>(sizeof(float))", "pipe.consumer_wait()"),
        ("4", "cuda::pipeline_consumer_wait_prior<0>(pipe)"),
    ],
)
def test_a_staged_copy_is_lifted_as_a_map(size: str, wait: str) -> None:
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.lift import lift_kernel

    src = STAGED.replace("SIZE", size).replace("WAIT", wait)
    res = lift_kernel(parse_source(src, "s.cu"), "k", binding_from_dict(_B))
    assert res.claimed and res.idiom is not None and "map" in str(res.idiom).lower()
