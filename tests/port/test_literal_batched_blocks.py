"""Literal ports of kernels whose threads never meet (no shared memory, barrier, warp lanes or
atomics) and that name a thread only by its global index run ``128 * F`` consecutive threads of
the grid per tile (cuda2nki.lift.literal.batching): each partition a run of ``F`` threads, one
DMA of ``F`` contiguous elements per partition, in place of one CUDA block per tile.  Exact
against the SIMT interpreter (64-bit limb math included) on both targets; kernels whose threads
meet, or that name ``threadIdx``/``blockIdx`` on their own, keep one block per tile."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.pipeline import port_file
from tests.port.test_literal import _kernel, _matches


def _layout(cu: Path) -> str:
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), lowering="literal")
    (msg,) = [d.message for d in res.diagnostics if d.code == "C2N2300"]
    return msg


#: name -> (source, grid, block, params, extra points, tile expected in the C2N2300 warning)
BATCHED = {
    "hash_ids": (  # grid-stride, 64-bit limbs, a device helper
        """
#include <cstdint>
__device__ uint64_t scramble(uint64_t v) {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    return v ^ (v >> 29);
}
__global__ void hash_ids(const uint64_t* ids, uint64_t* out, int count) {
    for (int q = blockIdx.x * blockDim.x + threadIdx.x; q < count; q += gridDim.x * blockDim.x)
        out[q] = scramble(ids[q] + (uint64_t)q);
}
""",
        "4",
        "256",
        'ids = { shape = ["count"], dtype = "uint64", role = "in" }\n'
        'out = { shape = ["count"], dtype = "uint64", role = "out" }\ncount = 2500',
        ["count = 129", "count = 1"],
        "128 x 8 tile",  # the 1024 threads of the fixed grid in one tile
    ),
    "low_bits": (  # guarded, 64-bit products, __popcll
        """
__global__ void low_bits(const unsigned long long* w, int* c, int n) {
    int k = threadIdx.x + blockDim.x * blockIdx.x;
    if (k < n) {
        unsigned long long v = w[k] & 0x00ff00ff00ff00ffULL;
        c[k] = (int)((v * 0x0001000100010001ULL) >> 48) + __popcll(w[k]);
    }
}
""",
        '"ceil_div(n, 64)"',
        "64",
        'w = { shape = ["n"], dtype = "uint64", role = "in" }\n'
        'c = { shape = ["n"], dtype = "int32", role = "out" }\nn = 700',
        ["n = 65", "n = 3"],
        "128 x 8 tile",  # a grid sized by the data: masked past the launch's last thread
    ),
    "soft_clip": (  # early return, a gid local
        """
__global__ void soft_clip(float* out, const float* in, float k, int len) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= len) return;
    float v = in[gid];
    out[gid] = v > k ? k + (v - k) * 0.1f : v;
}
""",
        "3",
        "96",
        'out = { shape = ["len"], dtype = "float32", role = "out" }\n'
        'in = { shape = ["len"], dtype = "float32", role = "in" }\nk = 0.5\nlen = 288',
        ["len = 200", "len = 5"],
        "128 x 3 tile",  # 288 threads: not a multiple of 128, one masked tile
    ),
    "acc_steps": (  # a grid-stride loop in a masked tile (288 threads), an inner counted loop
        """
__global__ void acc_steps(const float* x, float* y, int n) {
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
        float s = x[i];
        for (int r = 0; r < 3; ++r) s = s * 0.5f + (float)r;
        y[i] = s;
    }
}
""",
        "3",
        "96",
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 1000',
        ["n = 100", "n = 289"],
        "128 x 3 tile",
    ),
    "offset_rows": (  # the block size spelled as a macro, a grid-stride step of constants
        """
#define THREADS 128
#define BLOCKS 6
__global__ void offset_rows(const int* src, int* dst, int total) {
    for (int e = blockIdx.x * THREADS + threadIdx.x; e < total; e += THREADS * BLOCKS)
        dst[e] = src[e] * 3 - (e >> 2);
}
""",
        "6",
        "128",
        'src = { shape = ["total"], dtype = "int32", role = "in" }\n'
        'dst = { shape = ["total"], dtype = "int32", role = "out" }\ntotal = 2000',
        ["total = 769"],
        "128 x 6 tile",
    ),
}


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_batched_literal_ports_match(name: str, tmp_path) -> None:
    src, grid, block, params, points, tile = BATCHED[name]
    cu = _kernel(tmp_path, src, name, grid, block, params, points)
    msg = _layout(cu)
    assert "consecutive threads of the grid per tile" in msg and tile in msg, msg
    _matches(cu, tmp_path)


#: kernels whose threads meet or that name a thread's own index: one block per tile
UNBATCHED = {
    "firsts": (  # threadIdx.x on its own
        """
__global__ void firsts(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = threadIdx.x == 0 ? 0.0f : x[i];
}
""",
        '"ceil_div(n, 128)"',
    ),
    "swap_pairs": (  # shared memory and a barrier
        """
__global__ void swap_pairs(const float* x, float* y, int n) {
    __shared__ float tile[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = tile[threadIdx.x ^ 1];
}
""",
        '"ceil_div(n, 128)"',
    ),
    "half_rows": (  # a block offset that is not the block's size: threads overlap
        """
__global__ void half_rows(const float* x, float* y, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
""",
        '"ceil_div(n, 128)"',
    ),
    "count_pos": (  # an atomic
        """
__global__ void count_pos(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) atomicAdd(y, 1.0f);
}
""",
        "4",
    ),
}


@pytest.mark.parametrize("name", sorted(UNBATCHED))
def test_kernels_whose_threads_meet_keep_one_block_per_tile(name: str, tmp_path) -> None:
    src, grid = UNBATCHED[name]
    params = (
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 300'
    )
    cu = _kernel(tmp_path, src, name, grid, "128", params)
    assert "consecutive threads of the grid" not in _layout(cu)


def test_a_data_sized_grid_that_gathers_keeps_one_block_per_tile(tmp_path) -> None:
    """Masked-off threads past the launch's end would gather element 0 again and again."""
    src = """
__global__ void pick(const int* at, const float* table, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[at[i]];
}
"""
    params = (
        'at = { shape = ["n"], dtype = "int32", role = "in", range = [0, 15] }\n'
        'table = { shape = [16], dtype = "float32", role = "in" }\n'
        'out = { shape = ["n"], dtype = "float32", role = "out" }\nn = 300'
    )
    cu = _kernel(tmp_path, src, "pick", '"ceil_div(n, 64)"', "64", params, ["n = 7"])
    assert "consecutive threads of the grid" not in _layout(cu)
    _matches(cu, tmp_path)
