"""Grid-stride sums whose trips are a loop around the row tile: per-block partials
(``out[blockIdx.x] = s[0]`` after a shared tree or shuffles), unrolled loops keeping several
running sums in a local array, totals finished with atomics, and the pre-CUDA 9 shuffles. Each
ports through the recogniser (no literal fallback) and matches the SIMT interpreter on both
targets, with grids that do and do not cover the vector in one trip and ragged last trips."""

from __future__ import annotations

import pytest

from tests.port.acceptance import port_variant


def _b(launch: dict, params: dict, shapes: list[dict]) -> dict:
    return {"kernel": "k", "launch": launch, "params": params, "check": {"shapes": shapes}}


def _t(shape: list, role: str, dtype: str = "float32") -> dict:
    return {"shape": shape, "dtype": dtype, "role": role}


PARTIALS = [
    (
        "partials/tree_fixed_grid",
        """
__global__ void k(const float* x, float* part, int n) {
    __shared__ float s[128];
    float r = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        r += x[i];
    s[threadIdx.x] = r;
    __syncthreads();
    for (int h = 64; h > 0; h >>= 1) {
        if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = s[0];
}""",
        _b(
            {"grid": [5], "block": [128]},
            {"x": _t(["n"], "in"), "part": _t([5], "out"), "n": 3000},
            [{"n": 100}, {"n": 641}, {"n": 2000}],
        ),
    ),
    (
        "partials/many_blocks_min_grid",
        """
__global__ void k(float* o, const float* v, unsigned int len) {
    __shared__ float sh[64];
    unsigned int t = threadIdx.x;
    float a = 0.0f;
    for (unsigned int p = blockIdx.x * 64 + t; p < len; p += 64 * gridDim.x) a += v[p] * 2.0f;
    sh[t] = a;
    __syncthreads();
    for (unsigned int w = 32; w > 0; w /= 2) {
        if (t < w) sh[t] = sh[t] + sh[t + w];
        __syncthreads();
    }
    if (t == 0) { o[blockIdx.x] = sh[0]; }
}""",
        _b(
            {"grid": ["min(ceil_div(len, 64), 200)"], "block": [64]},
            {"o": _t(["min(ceil_div(len, 64), 200)"], "out"), "v": _t(["len"], "in"), "len": 9000},
            [{"len": 300}, {"len": 12801}, {"len": 30000}],
        ),
    ),
    (
        "partials/unrolled_local_array_shuffles",
        """
#define U 3
__device__ float wsum(float v) {
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffff, v, d);
    return v;
}
__global__ void k(float* out, const float* in, int n) {
    __shared__ float ws[32];
    int stride = blockDim.x * gridDim.x;
    float acc[U] = {0.0f};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride * U) {
        for (int u = 0; u < U; u++)
            acc[u] += (i + u * stride < n) ? in[i + u * stride] : 0.0f;
    }
    for (int u = 1; u < U; u++) acc[0] += acc[u];
    float v = wsum(acc[0]);
    if (threadIdx.x % 32 == 0) ws[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? ws[threadIdx.x] : 0.0f;
        v = wsum(v);
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }
}""",
        _b(
            {"grid": ["min(ceil_div(n, 128), 6)"], "block": [128]},
            {"out": _t(["min(ceil_div(n, 128), 6)"], "out"), "in": _t(["n"], "in"), "n": 5000},
            [{"n": 200}, {"n": 2305}, {"n": 7000}],
        ),
    ),
    (
        "partials/legacy_shfl_xor_width",
        """
__global__ void k(const int* in, int* out, int N) {
    __shared__ int sh[8];
    int s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
        s += in[i];
    for (int m = 16; m >= 1; m /= 2) s += __shfl_xor(s, m, 32);
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        int b = 0;
        for (int w = 0; w < 8; w++) b += sh[w];
        out[blockIdx.x] = b;
    }
}""",
        _b(
            {"grid": [4], "block": [256]},
            {"in": _t(["N"], "in", "int32"), "out": _t([4], "out", "int32"), "N": 4000},
            [{"N": 77}, {"N": 1025}, {"N": 5000}],
        ),
    ),
]

#: maxima and minima: the ragged last trip is padded with the op's identity
EXTREMA = [
    (
        "extrema/block_max_tree",
        """
__global__ void k(const float* x, float* out, int n) {
    __shared__ float s[128];
    float m = -INFINITY;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        m = fmaxf(m, x[i]);
    s[threadIdx.x] = m;
    __syncthreads();
    for (int h = 64; h > 0; h >>= 1) {
        if (threadIdx.x < h) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + h]);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}""",
        _b(
            {"grid": [6], "block": [128]},
            {"x": _t(["n"], "in"), "out": _t([6], "out"), "n": 3000},
            [{"n": 900}, {"n": 1000}, {"n": 5000}],
        ),
    ),
    (
        "extrema/block_min_shuffles",
        """
__global__ void k(float* lo, const float* v, unsigned int len) {
    __shared__ float w[4];
    float m = 3.0e38f;
    unsigned int p = blockIdx.x * blockDim.x + threadIdx.x;
    while (p < len) {
        m = fminf(m, v[p]);
        p += blockDim.x * gridDim.x;
    }
    for (int d = 16; d >= 1; d >>= 1) m = fminf(m, __shfl_down_sync(0xffffffff, m, d));
    if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) lo[blockIdx.x] = fminf(fminf(w[0], w[1]), fminf(w[2], w[3]));
}""",
        _b(
            {"grid": ["min(ceil_div(len, 128), 5)"], "block": [128]},
            {"lo": _t(["min(ceil_div(len, 128), 5)"], "out"), "v": _t(["len"], "in"), "len": 2000},
            [{"len": 129}, {"len": 700}, {"len": 4000}],
        ),
    ),
]

LADDERS = [
    (
        "ladder/shift_offsets_counted_up",
        """
__device__ float fold(float v) {
#pragma unroll 5
    for (int k = 1; k < 6; k++) v += __shfl_down_sync(0xffffffff, v, warpSize >> k);
    return v;
}
__global__ void k(float* g_out, const float* g_in, int n) {
    __shared__ float ws[32];
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        s += g_in[i];
    s = fold(s);
    if (threadIdx.x % 32 == 0) ws[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x / 32 == 0) {
        s = threadIdx.x < blockDim.x / 32 ? ws[threadIdx.x] : 0.0f;
        s = fold(s);
    }
    if (threadIdx.x == 0) g_out[blockIdx.x] = s;
}""",
        _b(
            {"grid": [3], "block": [256]},
            {"g_out": _t([3], "out"), "g_in": _t(["n"], "in"), "n": 4000},
            [{"n": 50}, {"n": 1000}, {"n": 6000}],
        ),
    ),
    (
        "ladder/xor_masks_counted_down",
        """
__global__ void k(const float* x, float* tot, int n) {
    float s = 0.0f;
    for (int i = blockIdx.x * 64 + threadIdx.x; i < n; i += 64 * gridDim.x) s += x[i];
    for (int b = 4; b >= 0; --b) s += __shfl_xor_sync(0xffffffffu, s, 1 << b);
    if ((threadIdx.x & 31) == 0) atomicAdd(tot, s);
}""",
        _b(
            {"grid": ["min(ceil_div(n, 64), 9)"], "block": [64]},
            {"x": _t(["n"], "in"), "tot": _t([1], "inout"), "n": 3000},
            [{"n": 65}, {"n": 700}, {"n": 5000}],
        ),
    ),
]

TOTALS = [
    (
        "total/unrolled_pairs_warp_atomic",
        """
__global__ void k(const float* src, float* total, int m) {
    const int width = gridDim.x * blockDim.x;
    float part[2];
    for (int q = 0; q < 2; q++) part[q] = 0.0f;
    for (int at = blockIdx.x * blockDim.x + threadIdx.x; at < m; at += 2 * width) {
        for (int q = 0; q < 2; q++) {
            int e = at + q * width;
            if (e < m) part[q] += src[e];
        }
    }
    float s = part[0] + part[1];
    for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffff, s, d);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, s);
}""",
        _b(
            {"grid": ["min(ceil_div(m, 128), 10)"], "block": [128]},
            {"src": _t(["m"], "in"), "total": _t([1], "inout"), "m": 4000},
            [{"m": 90}, {"m": 2561}, {"m": 9000}],
        ),
    ),
    (
        "total/legacy_shfl_down_block_atomic",
        """
__inline__ __device__ int warp_red(int val) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) val += __shfl_down(val, offset);
    return val;
}
__global__ void k(int* in, int* out, int N) {
    static __shared__ int shared[32];
    int sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
        sum += in[i];
    int lane = threadIdx.x % warpSize, wid = threadIdx.x / warpSize;
    sum = warp_red(sum);
    if (lane == 0) shared[wid] = sum;
    __syncthreads();
    sum = (threadIdx.x < blockDim.x / warpSize) ? shared[lane] : 0;
    if (wid == 0) sum = warp_red(sum);
    if (threadIdx.x == 0) atomicAdd(out, sum);
}""",
        _b(
            {"grid": ["min(ceil_div(N, 256), 7)"], "block": [256]},
            {"in": _t(["N"], "in", "int32"), "out": _t([1], "inout", "int32"), "N": 3000},
            [{"N": 31}, {"N": 1793}, {"N": 6000}],
        ),
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), PARTIALS, ids=[v[0] for v in PARTIALS])
def test_per_block_partials_port_through_the_recogniser(vid, src, bdict, target, tmp_path):
    """Each block's partial is an output: a row tile per group of blocks, the grid-stride trips
    a loop accumulating whole tiles, one reduction along the row at the end."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-5)
    assert res.idiom == "reduce"
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert "tensor_reduce" in res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), TOTALS, ids=[v[0] for v in TOTALS])
def test_totals_of_unrolled_or_legacy_shuffles_port(vid, src, bdict, target, tmp_path):
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-5)
    assert res.idiom == "reduce"
    assert len(points) >= 3 and not run.mismatches, run.mismatches


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), LADDERS, ids=[v[0] for v in LADDERS])
def test_shuffle_ladders_counted_by_an_additive_variable_unroll(vid, src, bdict, target, tmp_path):
    """``v += __shfl_down_sync(m, v, 32 >> k)`` for k = 1..5 (or xor masks ``1 << b`` counted
    down): a constant number of steps, each shuffling what the previous one produced."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-5)
    assert res.idiom == "reduce"
    assert len(points) >= 3 and not run.mismatches, run.mismatches


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), EXTREMA, ids=[v[0] for v in EXTREMA])
def test_per_block_extrema_pad_the_last_trip_with_the_identity(vid, src, bdict, target, tmp_path):
    res, run, points = port_variant(vid, src, bdict, target, tmp_path)
    assert res.idiom == "reduce"
    assert len(points) >= 3 and not run.mismatches, run.mismatches
