"""Control flow and data forms the lifter runs in an equivalent form: ``switch`` as an ``if``
chain, ``while`` loops that step a variable of their condition, ``__constant__`` tables,
clamped neighbour indices, shared scalar accumulators, packed ``__half2`` arithmetic.

Each spelling is lifted (the intent IR must evaluate to the NumPy meaning on every test point);
the ``PORT`` subset is also ported and run in the NKI simulator against the SIMT interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.frontend import parse_source
from cuda2nki.lift import lift_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from variants import _b, assert_lifts_to_meaning, t  # noqa: E402


def _act(x: np.ndarray, mode: int, slope: float) -> np.ndarray:
    if mode == 0:
        return np.maximum(x, 0)
    if mode == 1:
        return np.where(x > 0, x, slope * x)
    if mode == 2:
        return np.tanh(x)
    return x


def _sobel_valid(img: np.ndarray) -> np.ndarray:
    h, w = img.shape
    out = np.zeros_like(img)
    kern = [[1, 2, 1], [0, 0, 0], [-1, -2, -1]]
    for dy, row in enumerate(kern):
        for dx, c in enumerate(row):
            out[: h - 2, : w - 2] += c * img[dy : dy + h - 2, dx : dx + w - 2]
    return out


def _blur3(x: np.ndarray) -> np.ndarray:
    p = np.concatenate([x[:1], x, x[-1:]])
    return 0.25 * p[:-2] + 0.5 * p[1:-1] + 0.25 * p[2:]


def _grad2(a: np.ndarray) -> np.ndarray:
    p = np.pad(a, 1, mode="edge")
    return p[:-2, 1:-1] - p[2:, 1:-1] + p[1:-1, :-2] - p[1:-1, 2:]


_MAP1 = {"grid": ["ceil_div(n, 128)"], "block": [128]}

CASES = [
    (
        "switch/break_per_case",
        """
__global__ void k(float* data, int n, int mode, float slope) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = data[i];
        switch (mode) {
            case 0: v = v > 0.0f ? v : 0.0f; break;
            case 1: v = v > 0.0f ? v : slope * v; break;
            case 2: v = tanhf(v); break;
            default: break;
        }
        data[i] = v;
    }
}""",
        _b(
            _MAP1,
            {"data": t(["n"], "inout"), "n": 300, "mode": 1, "slope": 0.1},
            [{"n": 129, "mode": 0}, {"n": 77, "mode": 2}, {"n": 200, "mode": 5}],
        ),
        "map",
        lambda a, s: {"data": _act(a["data"], s["mode"], s["slope"])},
    ),
    (
        "switch/fallthrough_default_first_return",
        """
__global__ void k(const float* x, float* y, int count, int op) {
    int g = threadIdx.x + blockDim.x * blockIdx.x;
    if (g >= count) return;
    float r = x[g];
    switch (op) {
    default:
        y[g] = -r;
        return;
    case 3:
    case 4:
        r = r * 2.0f;
    case 5:
        r = r + 1.0f;
    }
    y[g] = r;
}""",
        _b(
            {"grid": ["ceil_div(count, 64)"], "block": [64]},
            {"x": t(["count"], "in"), "y": t(["count"], "out"), "count": 200, "op": 3},
            [{"count": 65, "op": 4}, {"count": 100, "op": 5}, {"count": 33, "op": 0}],
        ),
        "map",
        lambda a, s: {
            "y": {3: 2 * a["x"] + 1, 4: 2 * a["x"] + 1, 5: a["x"] + 1}.get(s["op"], -a["x"])
        },
    ),
    (
        "switch/on_data_2d",
        """
__global__ void k(const int* code, const float* x, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        float v = x[r * cols + c];
        float o = 0.0f;
        switch (code[r * cols + c]) {
            case 1: o = v * v; break;
            case 2: { float h = 0.5f * v; o = h + 3.0f; break; }
            case 7: o = fabsf(v);
        }
        out[r * cols + c] = o;
    }
}""",
        _b(
            {"grid": ["ceil_div(cols, 16)", "ceil_div(rows, 8)"], "block": [16, 8]},
            {
                "code": t(["rows", "cols"], "in", "int32", range=[0, 9]),
                "x": t(["rows", "cols"], "in"),
                "out": t(["rows", "cols"], "out"),
                "rows": 20,
                "cols": 40,
            },
            [{"rows": 9, "cols": 17}],
        ),
        "map",
        lambda a, s: {
            "out": np.select(
                [a["code"] == 1, a["code"] == 2, a["code"] == 7],
                [a["x"] ** 2, 0.5 * a["x"] + 3, np.abs(a["x"])],
                0.0,
            )
        },
    ),
    (
        "while/block_stride_then_tree",
        """
__global__ void k(const float* partials, float* out, int m) {
    __shared__ float cache[256];
    int t = threadIdx.x;
    float v = 0.0f;
    int j = t;
    while (j < m) { v += partials[j]; j += blockDim.x; }
    cache[t] = v;
    __syncthreads();
    int s = blockDim.x / 2;
    while (s > 0) {
        if (t < s) cache[t] += cache[t + s];
        __syncthreads();
        s >>= 1;
    }
    if (t == 0) out[0] = cache[0];
}""",
        _b(
            {"grid": [1], "block": [256]},
            {"partials": t(["m"], "in"), "out": t([1], "out"), "m": 1000},
            [{"m": 1}, {"m": 257}],
        ),
        "reduce",
        lambda a, s: {"out": np.array([a["partials"].sum()])},
    ),
    (
        "while/grid_stride_map",
        """
__global__ void k(const float* a, float* b, int n) {
    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
    while (idx < n) {
        b[idx] = 2.0f * a[idx] - 1.0f;
        idx = idx + blockDim.x * gridDim.x;
    }
}""",
        _b(
            {"grid": [4], "block": [64]},
            {"a": t(["n"], "in"), "b": t(["n"], "out"), "n": 1000},
            [{"n": 3}, {"n": 256}],
        ),
        "map",
        lambda a, s: {"b": 2 * a["a"] - 1},
    ),
    (
        "while/row_loop_counter",
        """
__global__ void k(const float* mat, float* sums, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float acc = 0.0f;
        int c = 0;
        while (c < cols) {
            acc += mat[row * cols + c];
            c++;
        }
        sums[row] = acc;
    }
}""",
        _b(
            {"grid": ["ceil_div(rows, 32)"], "block": [32]},
            {"mat": t(["rows", "cols"], "in"), "sums": t(["rows"], "out"), "rows": 40, "cols": 9},
            [{"rows": 3, "cols": 100}],
        ),
        "reduce",
        lambda a, s: {"sums": a["mat"].sum(1)},
    ),
    (
        "table/fir5_constant",
        """
__constant__ float taps[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
__global__ void k(const float* sig, float* res, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 4) {
        float a = 0.0f;
        for (int t = 0; t < 5; t++) a += taps[t] * sig[i + t];
        res[i] = a;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {"sig": t(["n"], "in"), "res": t(["n - 4"], "out"), "n": 300},
            [{"n": 69}],
        ),
        "stencil",
        lambda a, s: {
            "res": np.convolve(a["sig"], [0.1, 0.2, 0.4, 0.2, 0.1], mode="valid"),
        },
    ),
    (
        "table/conv3x3_nested_init_2d",
        """
__constant__ float kern[3][3] = {{1.0f, 2.0f, 1.0f}, {0.0f, 0.0f, 0.0f}, {-1.0f, -2.0f, -1.0f}};
__global__ void k(const float* img, float* out, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float s = 0.0f;
    if (x < w - 2 && y < h - 2) {
        for (int dy = 0; dy < 3; ++dy)
            for (int dx = 0; dx < 3; ++dx)
                s += kern[dy][dx] * img[(y + dy) * w + x + dx];
    }
    out[y * w + x] = s;
}""",
        _b(
            {"grid": ["ceil_div(w, 16)", "ceil_div(h, 8)"], "block": [16, 8]},
            {"img": t(["h", "w"], "in"), "out": t(["h", "w"], "out"), "h": 20, "w": 37},
            [{"h": 9, "w": 130}],
        ),
        "stencil",
        lambda a, s: {"out": _sobel_valid(a["img"])},
    ),
    (
        "table/coefficients_in_device_function",
        """
__constant__ float coef[2] = {1.5f, -0.25f};
__device__ float affine(float v) { return coef[0] * v + coef[1]; }
__global__ void k(const float* x, float* y, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) y[i] = affine(x[i]);
}""",
        _b(_MAP1, {"x": t(["n"], "in"), "y": t(["n"], "out"), "n": 500}, [{"n": 129}]),
        "map",
        lambda a, s: {"y": 1.5 * a["x"] - 0.25},
    ),
    (
        "localarr/four_accumulators_zero_init",
        """
__global__ void k(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float part[4] = {0.0f};
    for (int c = 0; c < cols; c += 4)
        for (int j = 0; j < 4; ++j) part[j] += x[r * cols + c + j];
    y[r] = (part[0] + part[1]) + (part[2] + part[3]);
}""",
        _b(
            {"grid": ["ceil_div(rows, 32)"], "block": [32]},
            {"x": t(["rows", "cols"], "in"), "y": t(["rows"], "out"), "rows": 40, "cols": 16},
            [{"rows": 5, "cols": 400}],
        ),
        "reduce",
        lambda a, s: {"y": a["x"].sum(1)},
    ),
    (
        "localarr/literal_weights",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float w[3] = {2.0f, -1.0f, 0.5f};
    if (i < n) y[i] = w[0] * x[i] * x[i] + w[1] * x[i] + w[2];
}""",
        _b(_MAP1, {"x": t(["n"], "in"), "y": t(["n"], "out"), "n": 300}, [{"n": 1}]),
        "map",
        lambda a, s: {"y": 2 * a["x"] ** 2 - a["x"] + 0.5},
    ),
    (
        "localarr/staged_then_combined",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v[4];
        for (int j = 0; j < 4; j++) v[j] = x[4 * i + j];
        float ss = 0.0f;
        for (int j = 0; j < 4; j++) ss += v[j] * v[j];
        y[i] = ss;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"x": t(["4 * n"], "in"), "y": t(["n"], "out"), "n": 300},
            [{"n": 129}],
        ),
        "stencil",
        lambda a, s: {"y": (a["x"].reshape(-1, 4) ** 2).sum(1)},
    ),
    (
        "tiles/kslab_two_loads_per_thread",
        """
template <int TS, int KS>
__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float sa[TS][KS];
    __shared__ float sb[KS][TS];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TS + ty, col = blockIdx.x * TS + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += KS) {
        for (int r = 0; r < KS / TS; ++r) {
            int ak = k0 + r * TS + tx;
            sa[ty][r * TS + tx] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
            int bk = k0 + r * TS + ty;
            sb[r * TS + ty][tx] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < KS; ++kk) acc += sa[ty][kk] * sb[kk][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
void launch(const float* A, const float* B, float* C, int M, int N, int K) {
    k<8, 32><<<dim3((N + 7) / 8, (M + 7) / 8), dim3(8, 8)>>>(A, B, C, M, N, K);
}""",
        _b(
            {"grid": ["ceil_div(N, 8)", "ceil_div(M, 8)"], "block": [8, 8]},
            {
                "A": t(["M", "K"], "in"),
                "B": t(["K", "N"], "in"),
                "C": t(["M", "N"], "out"),
                "M": 20,
                "N": 17,
                "K": 70,
            },
            [{"M": 9, "N": 40, "K": 33}],
        ),
        "contract",
        lambda a, s: {"C": a["A"] @ a["B"]},
    ),
    (
        "tiles/gemv_kslab_guarded",
        """
__global__ void k(const float* A, const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int c0 = 0; c0 < cols; c0 += 16)
        for (int c = 0; c < 16; ++c)
            if (r < rows && c0 + c < cols) acc += A[r * cols + c0 + c] * x[c0 + c];
    if (r < rows) y[r] = acc;
}""",
        _b(
            {"grid": ["ceil_div(rows, 64)"], "block": [64]},
            {
                "A": t(["rows", "cols"], "in"),
                "x": t(["cols"], "in"),
                "y": t(["rows"], "out"),
                "rows": 70,
                "cols": 40,
            },
            [{"rows": 3, "cols": 129}],
        ),
        "contract",
        lambda a, s: {"y": a["A"] @ a["x"]},
    ),
    (
        "clamp/blur3_1d",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int l = max(i - 1, 0);
        int r = min(i + 1, n - 1);
        y[i] = 0.25f * x[l] + 0.5f * x[i] + 0.25f * x[r];
    }
}""",
        _b(_MAP1, {"x": t(["n"], "in"), "y": t(["n"], "out"), "n": 300}, [{"n": 3}, {"n": 129}]),
        "stencil",
        lambda a, s: {"y": _blur3(a["x"])},
    ),
    (
        "clamp/nested_min_max_window",
        """
__global__ void k(const float* src, float* dst, int len) {
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    if (g >= len) return;
    float acc = 0.0f;
    for (int d = -2; d <= 2; ++d) acc += src[min(max(g + d, 0), len - 1)];
    dst[g] = acc;
}""",
        _b(
            {"grid": ["ceil_div(len, 64)"], "block": [64]},
            {"src": t(["len"], "in"), "dst": t(["len"], "out"), "len": 200},
            [{"len": 3}, {"len": 65}],
        ),
        "stencil",
        lambda a, s: {
            "dst": sum(
                a["src"][np.clip(np.arange(s["len"]) + d, 0, s["len"] - 1)] for d in range(-2, 3)
            )
        },
    ),
    (
        "clamp/replicate_2d_rows_cols",
        """
__global__ void k(const float* in, float* out, int h, int w) {
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w || y >= h) return;
    int up = max(y - 1, 0), down = min(y + 1, h - 1);
    int left = max(x - 1, 0), right = min(x + 1, w - 1);
    out[y * w + x] = in[up * w + x] - in[down * w + x] + in[y * w + left] - in[y * w + right];
}""",
        _b(
            {"grid": ["ceil_div(w, 16)", "ceil_div(h, 16)"], "block": [16, 16]},
            {"in": t(["h", "w"], "in"), "out": t(["h", "w"], "out"), "h": 30, "w": 20},
            [{"h": 1, "w": 129}],
        ),
        "map",
        lambda a, s: {"out": _grad2(a["in"])},
    ),
    (
        "divided/nearest_upsample_2x",
        """
__global__ void k(const float* in, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 2 * W && y < 2 * H) out[y * (2 * W) + x] = in[(y / 2) * W + x / 2];
}""",
        _b(
            {"grid": ["ceil_div(2 * W, 16)", "ceil_div(2 * H, 16)"], "block": [16, 16]},
            {"in": t(["H", "W"], "in"), "out": t(["2 * H", "2 * W"], "out"), "H": 9, "W": 13},
            [{"H": 1, "W": 70}],
        ),
        "map",
        lambda a, s: {"out": a["in"].repeat(2, axis=0).repeat(2, axis=1)},
    ),
    (
        "divided/row_of_a_pair_and_its_parity",
        """
__global__ void k(const float* in, float* out, int n, int c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 2 * n) out[i] = in[(i / 2) * c + i % 2] * 3.0f;
}""",
        _b(
            {"grid": ["ceil_div(2 * n, 64)"], "block": [64]},
            {"in": t(["n", "c"], "in"), "out": t(["2 * n"], "out"), "n": 50, "c": 5},
            [{"n": 3, "c": 2}],
        ),
        "map",
        lambda a, s: {"out": 3.0 * a["in"][:, :2].reshape(-1)},
    ),
    (
        "shared_scalar/row_sum_atomic_accumulator",
        """
__global__ void k(const float* m, float* out, int rows, int cols) {
    __shared__ float total;
    if (threadIdx.x == 0) total = 0.0f;
    __syncthreads();
    float p = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) p += m[blockIdx.x * cols + c];
    atomicAdd(&total, p);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}""",
        _b(
            {"grid": ["rows"], "block": [64]},
            {"m": t(["rows", "cols"], "in"), "out": t(["rows"], "out"), "rows": 9, "cols": 200},
            [{"rows": 130, "cols": 3}],
        ),
        "reduce",
        lambda a, s: {"out": a["m"].sum(1)},
    ),
    (
        "shared_scalar/block_max_then_global",
        """
__global__ void k(const int* v, int* best, int n) {
    __shared__ int bm;
    if (threadIdx.x == 0) bm = -2147483647 - 1;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMax(&bm, v[i]);
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(best, bm);
}""",
        _b(
            {"grid": ["ceil_div(n, 256)"], "block": [256]},
            {"v": t(["n"], "in", "int32"), "best": t([1], "inout", "int32"), "n": 1000},
            [{"n": 129}],
        ),
        "reduce",
        lambda a, s: {"best": np.maximum(a["best"], a["v"].max())},
    ),
    (
        "shared_scalar/count_positive_2d_block",
        """
__global__ void k(const float* x, int* count, int n) {
    __shared__ int c;
    if (threadIdx.x == 0 && threadIdx.y == 0) c = 0;
    __syncthreads();
    int i = blockIdx.x * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&c, 1);
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) count[blockIdx.x] = c;
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [32, 4]},
            {"x": t(["n"], "in"), "count": t(["ceil_div(n, 128)"], "out", "int32"), "n": 300},
            [{"n": 128}],
        ),
        "reduce",
        lambda a, s: {
            "count": np.minimum(128, s["n"] - 128 * np.arange(-(-s["n"] // 128))),
        },
    ),
    (
        "half2/scale_pairs",
        """
#include <cuda_fp16.h>
__global__ void k(__half* data, float factor, int pairs) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 f2 = __float2half2_rn(factor);
    if (t < pairs) {
        __half2* d2 = reinterpret_cast<__half2*>(data);
        d2[t] = __hmul2(d2[t], f2);
    }
}""",
        _b(
            {"grid": ["ceil_div(pairs, 128)"], "block": [128]},
            {"data": t(["2 * pairs"], "inout", "float16"), "factor": 0.75, "pairs": 300},
            [{"pairs": 1}],
        ),
        "map",
        lambda a, s: {"data": a["data"] * s["factor"]},
    ),
    (
        "half2/fma_of_two_inputs",
        """
#include <cuda_fp16.h>
__global__ void k(const __half2* a, const __half2* b, __half2* c, int m) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i >= m) return;
    __half2 one = __halves2half2(__float2half(1.0f), __float2half(1.0f));
    c[i] = __hfma2(a[i], b[i], one);
}""",
        _b(
            {"grid": ["ceil_div(m, 64)"], "block": [64]},
            {
                "a": t(["2 * m"], "in", "float16"),
                "b": t(["2 * m"], "in", "float16"),
                "c": t(["2 * m"], "out", "float16"),
                "m": 100,
            },
        ),
        "map",
        lambda a, s: {"c": a["a"] * a["b"] + 1},
    ),
    (
        "half2/lanes_to_float_sum",
        """
#include <cuda_fp16.h>
__global__ void k(const __half2* x, float* y, int m) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < m) {
        __half2 v = __hadd2(x[i], x[i]);
        y[i] = __low2float(v) - __high2float(v);
    }
}""",
        _b(
            {"grid": ["ceil_div(m, 32)"], "block": [32]},
            {"x": t(["2 * m"], "in", "float16"), "y": t(["m"], "out"), "m": 70},
        ),
        "stencil",
        lambda a, s: {"y": 2 * a["x"][0::2] - 2 * a["x"][1::2]},
    ),
    (
        "inplace/gemv_transposed_global_accumulator",
        """
__global__ void k(const float* A, const float* v, float* out, int rows, int cols) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cols) return;
    out[j] = 0.0f;
    for (int i = 0; i < rows; ++i) out[j] += A[i * cols + j] * v[i];
}""",
        _b(
            {"grid": ["ceil_div(cols, 128)"], "block": [128]},
            {
                "A": t(["rows", "cols"], "in"),
                "v": t(["rows"], "in"),
                "out": t(["cols"], "out"),
                "rows": 150,
                "cols": 70,
            },
            [{"rows": 3, "cols": 300}],
        ),
        "contract",
        lambda a, s: {"out": a["A"].T @ a["v"]},
    ),
    (
        "inplace/row_gemv_into_inout",
        """
__global__ void k(const float* M, const float* x, float* y, int n, int m) {
    int r = threadIdx.x + blockIdx.x * blockDim.x;
    if (r < n) {
        for (int c = 0; c < m; c++) y[r] += M[r * m + c] * x[c];
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {
                "M": t(["n", "m"], "in"),
                "x": t(["m"], "in"),
                "y": t(["n"], "inout"),
                "n": 100,
                "m": 33,
            },
        ),
        "contract",
        lambda a, s: {"y": a["y"] + a["M"] @ a["x"]},
    ),
    (
        "inplace/column_max_2d_grid",
        """
__global__ void k(const float* x, float* colmax, int h, int w) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < w) {
        colmax[c] = -3.0e38f;
        for (int r = 0; r < h; r++) colmax[c] = fmaxf(colmax[c], x[r * w + c]);
    }
}""",
        _b(
            {"grid": ["ceil_div(w, 32)"], "block": [32]},
            {"x": t(["h", "w"], "in"), "colmax": t(["w"], "out"), "h": 40, "w": 50},
        ),
        "reduce",
        lambda a, s: {"colmax": a["x"].max(0)},
    ),
    (
        "reroll/four_outputs_per_thread",
        """
__global__ void k(const float* x, float* y, int quads) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= quads) return;
    float r[4];
    for (int j = 0; j < 4; ++j) r[j] = 2.0f * x[4 * i + j] + 1.0f;
    for (int j = 0; j < 4; ++j) y[4 * i + j] = r[j];
}""",
        _b(
            {"grid": ["ceil_div(quads, 64)"], "block": [64]},
            {"x": t(["4 * quads"], "in"), "y": t(["4 * quads"], "out"), "quads": 100},
            [{"quads": 1}],
        ),
        "map",
        lambda a, s: {"y": 2 * a["x"] + 1},
    ),
    (
        "reroll/coarsened_matmul_rows",
        """
#define TM 4
__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * TM;
    float acc[TM] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int kk = 0; kk < K; ++kk) {
        float b = col < N ? B[kk * N + col] : 0.0f;
        for (int r = 0; r < TM; ++r)
            acc[r] += (row0 + r < M ? A[(row0 + r) * K + kk] : 0.0f) * b;
    }
    for (int r = 0; r < TM; ++r)
        if (row0 + r < M && col < N) C[(row0 + r) * N + col] = acc[r];
}""",
        _b(
            {"grid": ["ceil_div(N, 16)", "ceil_div(M, 32)"], "block": [16, 8]},
            {
                "A": t(["M", "K"], "in"),
                "B": t(["K", "N"], "in"),
                "C": t(["M", "N"], "out"),
                "M": 40,
                "N": 20,
                "K": 30,
            },
            [{"M": 7, "N": 130, "K": 129}],
        ),
        "contract",
        lambda a, s: {"C": a["A"] @ a["B"]},
    ),
    (
        "reroll/two_halves_symbolic_stride",
        """
__global__ void k(const float* x, float* y, int h, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < h) {
        float v[2];
        v[0] = x[i];
        v[1] = x[i + h];
        for (int j = 0; j < 2; j++) y[i + j * h] = v[j] * s;
    }
}""",
        _b(
            {"grid": ["ceil_div(h, 128)"], "block": [128]},
            {"x": t(["2 * h"], "in"), "y": t(["2 * h"], "out"), "h": 300, "s": 0.5},
            [{"h": 129}],
        ),
        "map",
        lambda a, s: {"y": a["x"] * s["s"]},
    ),
    (
        "triangular/lower_row_sums",
        """
__global__ void k(const float* A, float* s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int j = 0; j <= i; ++j) acc += A[i * n + j];
        s[i] = acc;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 32)"], "block": [32]},
            {"A": t(["n", "n"], "in"), "s": t(["n"], "out"), "n": 40},
            [{"n": 1}, {"n": 33}],
        ),
        "reduce",
        lambda a, s: {"s": np.tril(a["A"]).sum(1)},
    ),
    (
        "triangular/exclusive_prefix_per_thread",
        """
__global__ void k(const float* x, float* pre, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    float run = 0.0f;
    for (int k2 = 0; k2 < i; k2++) run += x[k2];
    pre[i] = run;
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {"x": t(["n"], "in"), "pre": t(["n"], "out"), "n": 100},
            [{"n": 1}, {"n": 65}],
        ),
        "reduce",
        lambda a, s: {"pre": np.concatenate([[0.0], np.cumsum(a["x"])[:-1]])},
    ),
    (
        "triangular/warp_strided_causal_row_max",
        """
__global__ void k(const float* att, float* mx, int rows, int T) {
    int r = blockIdx.x;
    int lane = threadIdx.x;
    if (r >= rows) return;
    int t = r % T;
    float m = -3.0e38f;
    for (int s = lane; s <= t; s += 32) m = fmaxf(m, att[r * T + s]);
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));
    if (lane == 0) mx[r] = m;
}""",
        _b(
            {"grid": ["rows"], "block": [32]},
            {"att": t(["rows", "T"], "in"), "mx": t(["rows"], "out"), "rows": 12, "T": 5},
            [{"rows": 70, "T": 35}],
        ),
        "reduce",
        lambda a, s: {
            "mx": np.array(
                [a["att"][r, : r % s["T"] + 1].max() for r in range(s["rows"])], np.float64
            )
        },
    ),
]

#: also ported and compared with the SIMT interpreter in the NKI simulator
PORT = {
    "switch/break_per_case",
    "switch/on_data_2d",
    "while/grid_stride_map",
    "while/row_loop_counter",
    "table/fir5_constant",
    "localarr/four_accumulators_zero_init",
    "tiles/kslab_two_loads_per_thread",
    "tiles/gemv_kslab_guarded",
    "shared_scalar/row_sum_atomic_accumulator",
    "shared_scalar/block_max_then_global",
    "half2/scale_pairs",
    "inplace/gemv_transposed_global_accumulator",
    "inplace/row_gemv_into_inout",
    "reroll/four_outputs_per_thread",
    "reroll/coarsened_matmul_rows",
    "clamp/blur3_1d",
    "clamp/replicate_2d_rows_cols",
}


@pytest.mark.parametrize(
    ("vid", "src", "bdict", "idiom", "meaning"), CASES, ids=[c[0] for c in CASES]
)
def test_lifts_to_its_meaning(vid, src, bdict, idiom, meaning) -> None:
    assert_lifts_to_meaning(vid, src, bdict, idiom, meaning, seed0=11)


@pytest.mark.parametrize("vid", sorted(PORT))
def test_port_matches_simt(vid, tmp_path) -> None:
    from cuda2nki.pipeline import port_file
    from tests.port.acceptance import run_against_simt

    _, src, bdict, _, _ = next(c for c in CASES if c[0] == vid)
    path = tmp_path / "k.cu"
    path.write_text(src)
    binding = binding_from_dict(bdict, path=f"<{vid}>")
    res = port_file(path, binding=binding, target="nki")
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    (tmp_path / "port.py").write_text(res.source)
    run = run_against_simt(
        res, binding, tmp_path / "port.py", points=binding.test_points(), seed=lambda k: 3 + k
    )
    assert run.mismatches == [] and run.points, run.mismatches


_B1 = _b(
    {"grid": ["ceil_div(n, 64)"], "block": [64]},
    {"x": t(["n"], "in"), "y": t(["n"], "out"), "n": 100},
)

REFUSE = [
    (
        "switch with a break inside an if",
        "C2N2010",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    switch (i % 3) { case 0: if (v > 0.0f) break; v = -v; break; default: v = 2.0f * v; }
    y[i] = v;
}""",
        "break that is not the last statement",
    ),
    (
        "do-while decided by the data",
        "C2N2019",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r = x[i];
    do { r = 0.5f * r; } while (r > 1.0f);
    y[i] = r;
}""",
        "do-while",
    ),
    (
        "scatter whose data index also moves with the thread",
        "C2N2022",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(y + (int)x[i] + i, 1.0f);
}""",
        "a scatter into 'y'",
    ),
    (
        "while loop whose body does not step its condition",
        "C2N2019",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i;
    while (j < n) { j += 64; y[i] = x[i]; }
}""",
        "does not end by stepping",
    ),
]


@pytest.mark.parametrize(("what", "code", "src", "says"), REFUSE, ids=[r[0] for r in REFUSE])
def test_refusal_names_the_construct(what, code, src, says) -> None:
    res = lift_kernel(parse_source(src, "r.cu"), "k", binding_from_dict(_B1))
    assert not res.claimed and res.kernel_ir is None
    assert [d.code for d in res.diagnostics] == [code], [d.message for d in res.diagnostics]
    assert says in res.diagnostics[0].message
    assert res.diagnostics[0].loc.file == "r.cu" and res.diagnostics[0].loc.line >= 2
