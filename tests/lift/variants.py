"""Spellings of each idiom the lifter recognises: other variable names, index orders, guard
forms, block sizes, 1-D vs 2-D grids.  Each entry: (id, CUDA source, binding dict, expected
idiom, NumPy meaning of the outputs)."""

from __future__ import annotations

import numpy as np


def assert_lifts_to_meaning(vid: str, src: str, bdict: dict, idiom: str, meaning, seed0: int):
    """Lift kernel ``k`` of ``src`` with binding ``bdict``: claimed as ``idiom``, and the intent
    evaluator matches ``meaning(inputs, scalars)`` on every test point.  Returns the lift result."""
    from cuda2nki.binding import binding_from_dict, generate_inputs
    from cuda2nki.frontend import parse_source
    from cuda2nki.ir.evaluate import evaluate
    from cuda2nki.lift import lift_kernel

    binding = binding_from_dict({"kernel": "k", **bdict}, path=f"<{vid}>")
    res = lift_kernel(parse_source(src, f"{vid.replace('/', '_')}.cu"), "k", binding)
    assert res.claimed, [d.message for d in res.diagnostics]
    assert res.idiom == idiom
    for k, point in enumerate(binding.test_points()):
        resolved = binding.resolve(point)
        inputs = generate_inputs(resolved, seed=seed0 + k)
        got = evaluate(
            res.kernel_ir, {n: v.copy() for n, v in inputs.items()}, dict(resolved.scalars)
        )
        want = meaning(
            {n: v.astype(np.float64) if v.dtype.kind == "f" else v for n, v in inputs.items()},
            dict(resolved.scalars),
        )
        for name, ref in want.items():
            np.testing.assert_allclose(
                np.asarray(got[name], np.float64).reshape(np.shape(ref)),
                ref,
                rtol=1e-4,
                atol=1e-4,
                err_msg=f"{vid}:{name} at {resolved.scalars}",
            )
    return res


def _b(launch: dict, params: dict, shapes: list[dict] | None = None) -> dict:
    """A binding dict for kernel ``k``."""
    return {"kernel": "k", "launch": launch, "params": params, "check": {"shapes": shapes or []}}


F32 = "float32"


def t(shape: list, role: str, dtype: str = F32, **kw) -> dict:
    return {"shape": shape, "dtype": dtype, "role": role, **kw}


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


VARIANTS = [
    # ------------------------------------------------------------------ maps
    (
        "map/guard_if",
        """
__global__ void k(float* y, const float* x, int n) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < n) y[idx] = 3.0f * x[idx] + 1.0f;
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"y": t(["n"], "out"), "x": t(["n"], "in"), "n": 1000},
            [{"n": 129}],
        ),
        "map",
        lambda a, s: {"y": 3 * a["x"] + 1},
    ),
    (
        "map/early_return_reordered",
        """
__global__ void k(const float* src, float* dst, int count) {
    const unsigned gid = blockDim.x * blockIdx.x + threadIdx.x;
    if (gid >= count) { return; }
    float v = src[gid];
    dst[gid] = v > 0.0f ? v : 0.0f;
}""",
        _b(
            {"grid": ["ceil_div(count, 64)"], "block": [64]},
            {"src": t(["count"], "in"), "dst": t(["count"], "out"), "count": 777},
        ),
        "map",
        lambda a, s: {"dst": np.maximum(a["src"], 0)},
    ),
    (
        "map/grid_stride_named",
        """
__global__ void k(float* out, const float* a, const float* b, int total) {
    int stride = gridDim.x * blockDim.x;
    int start = blockIdx.x * blockDim.x + threadIdx.x;
    for (int p = start; p < total; p += stride) out[p] = a[p] * b[p];
}""",
        _b(
            {"grid": [4], "block": [256]},
            {
                "out": t(["total"], "out"),
                "a": t(["total"], "in"),
                "b": t(["total"], "in"),
                "total": 5000,
            },
            [{"total": 100}],
        ),
        "map",
        lambda a, s: {"out": a["a"] * a["b"]},
    ),
    (
        "map/2d_col_row",
        """
__global__ void k(float* o, const float* i0, int R, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = threadIdx.y + blockDim.y * blockIdx.y;
    if (r < R && c < C) o[r * C + c] = i0[r * C + c] * 2.0f;
}""",
        _b(
            {"grid": ["ceil_div(C, 16)", "ceil_div(R, 8)"], "block": [16, 8]},
            {"o": t(["R", "C"], "out"), "i0": t(["R", "C"], "in"), "R": 37, "C": 45},
        ),
        "map",
        lambda a, s: {"o": 2 * a["i0"]},
    ),
    (
        "map/float4",
        """
__global__ void k(float* out, const float* in, int n) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < n / 4) {
        float4 v = reinterpret_cast<const float4*>(in)[q];
        v.x += 1.0f; v.y += 1.0f; v.z += 1.0f; v.w += 1.0f;
        reinterpret_cast<float4*>(out)[q] = v;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 512)"], "block": [128]},
            {"out": t(["n"], "out"), "in": t(["n"], "in"), "n": 4096},
        ),
        "map",
        lambda a, s: {"out": a["in"] + 1},
    ),
    # ------------------------------------------------------------------ reductions
    (
        "reduce/shared_tree_halving",
        """
__global__ void k(const float* x, float* part, int n) {
    __shared__ float buf[128];
    int t = threadIdx.x;
    int g = blockIdx.x * 128 + t;
    buf[t] = g < n ? x[g] : 0.0f;
    __syncthreads();
    for (int s = 64; s > 0; s >>= 1) {
        if (t < s) buf[t] = buf[t] + buf[t + s];
        __syncthreads();
    }
    if (t == 0) part[blockIdx.x] = buf[0];
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"x": t(["n"], "in"), "part": t(["ceil_div(n, 128)"], "out"), "n": 1000},
        ),
        "reduce",
        lambda a, s: {"part": np.add.reduceat(a["x"], np.arange(0, a["x"].size, 128))},
    ),
    (
        "reduce/shared_tree_interleaved",
        """
__global__ void k(const float* in, float* out, int n) {
    __shared__ float s[64];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = 0.0f;
    if (i < n) s[tid] = in[i];
    __syncthreads();
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {"in": t(["n"], "in"), "out": t(["ceil_div(n, 64)"], "out"), "n": 700},
        ),
        "reduce",
        lambda a, s: {"out": np.add.reduceat(a["in"], np.arange(0, a["in"].size, 64))},
    ),
    (
        "reduce/row_loop_per_thread",
        """
__global__ void k(const float* m, float* rowmax, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float best = m[r * cols];
    for (int j = 1; j < cols; ++j) best = fmaxf(best, m[r * cols + j]);
    rowmax[r] = best;
}""",
        _b(
            {"grid": ["ceil_div(rows, 32)"], "block": [32]},
            {"m": t(["rows", "cols"], "in"), "rowmax": t(["rows"], "out"), "rows": 50, "cols": 33},
        ),
        "reduce",
        lambda a, s: {"rowmax": a["m"].max(axis=1)},
    ),
    (
        "reduce/column_if_max",
        """
__global__ void k(const float* m, float* colmin, int rows, int cols) {
    int c = threadIdx.x + blockIdx.x * blockDim.x;
    if (c < cols) {
        float v = 1e30f;
        for (int r = 0; r < rows; r++) { float e = m[r * cols + c]; if (e < v) v = e; }
        colmin[c] = v;
    }
}""",
        _b(
            {"grid": ["ceil_div(cols, 32)"], "block": [32]},
            {"m": t(["rows", "cols"], "in"), "colmin": t(["cols"], "out"), "rows": 20, "cols": 70},
        ),
        "reduce",
        lambda a, s: {"colmin": np.minimum(a["m"].min(axis=0), 1e30)},
    ),
    (
        "reduce/warp_xor_rows",
        """
__global__ void k(const float* x, float* s, int rows, int cols) {
    int row = blockIdx.x;
    int lane = threadIdx.x;
    float acc = 0.0f;
    for (int c = lane; c < cols; c += 32) acc += x[row * cols + c];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0) s[row] = acc;
}""",
        _b(
            {"grid": ["rows"], "block": [32]},
            {"x": t(["rows", "cols"], "in"), "s": t(["rows"], "out"), "rows": 9, "cols": 100},
        ),
        "reduce",
        lambda a, s: {"s": a["x"].sum(axis=1)},
    ),
    (
        "reduce/atomic_total",
        """
__global__ void k(const float* v, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, v[i]);
}""",
        _b(
            {"grid": ["ceil_div(n, 256)"], "block": [256]},
            {"v": t(["n"], "in"), "total": t([1], "inout"), "n": 3000},
        ),
        "reduce",
        lambda a, s: {"total": a["total"] + a["v"].sum()},
    ),
    # ------------------------------------------------------------------ contractions
    (
        "contract/matmul_ij",
        """
__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M && j < N) {
        float s = 0.0f;
        for (int p = 0; p < K; ++p) s += A[i * K + p] * B[p * N + j];
        C[i * N + j] = s;
    }
}""",
        _b(
            {"grid": ["ceil_div(N, 8)", "ceil_div(M, 8)"], "block": [8, 8]},
            {
                "A": t(["M", "K"], "in"),
                "B": t(["K", "N"], "in"),
                "C": t(["M", "N"], "out"),
                "M": 20,
                "N": 19,
                "K": 33,
            },
        ),
        "contract",
        lambda a, s: {"C": a["A"] @ a["B"]},
    ),
    (
        "contract/matmul_fma_swapped",
        """
__global__ void k(float* out, const float* lhs, const float* rhs, int K, int N, int M) {
    int col = threadIdx.x + blockIdx.x * blockDim.x;
    int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (col >= N || row >= M) return;
    float acc = 0.0f;
    for (int kk = 0; kk < K; kk++) acc = fmaf(rhs[kk * N + col], lhs[row * K + kk], acc);
    out[row * N + col] = acc;
}""",
        _b(
            {"grid": ["ceil_div(N, 16)", "ceil_div(M, 4)"], "block": [16, 4]},
            {
                "out": t(["M", "N"], "out"),
                "lhs": t(["M", "K"], "in"),
                "rhs": t(["K", "N"], "in"),
                "K": 17,
                "N": 21,
                "M": 11,
            },
        ),
        "contract",
        lambda a, s: {"out": a["lhs"] @ a["rhs"]},
    ),
    (
        "contract/gemv",
        """
__global__ void k(const float* W, const float* v, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float dot = 0.0f;
        for (int c = 0; c < cols; c++) dot += W[r * cols + c] * v[c];
        y[r] = dot;
    }
}""",
        _b(
            {"grid": ["ceil_div(rows, 64)"], "block": [64]},
            {
                "W": t(["rows", "cols"], "in"),
                "v": t(["cols"], "in"),
                "y": t(["rows"], "out"),
                "rows": 70,
                "cols": 40,
            },
        ),
        "contract",
        lambda a, s: {"y": a["W"] @ a["v"]},
    ),
    (
        "contract/tiled_shared",
        """
#define T 8
__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float a[T][T];
    __shared__ float b[T][T];
    int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
    float sum = 0.0f;
    for (int t0 = 0; t0 < K; t0 += T) {
        a[threadIdx.y][threadIdx.x] = (r < M && t0 + threadIdx.x < K) ? A[r * K + t0 + threadIdx.x] : 0.0f;
        b[threadIdx.y][threadIdx.x] = (c < N && t0 + threadIdx.y < K) ? B[(t0 + threadIdx.y) * N + c] : 0.0f;
        __syncthreads();
        for (int q = 0; q < T; ++q) sum += a[threadIdx.y][q] * b[q][threadIdx.x];
        __syncthreads();
    }
    if (r < M && c < N) C[r * N + c] = sum;
}""",
        _b(
            {"grid": ["ceil_div(N, 8)", "ceil_div(M, 8)"], "block": [8, 8]},
            {
                "A": t(["M", "K"], "in"),
                "B": t(["K", "N"], "in"),
                "C": t(["M", "N"], "out"),
                "M": 13,
                "N": 10,
                "K": 21,
            },
        ),
        "contract",
        lambda a, s: {"C": a["A"] @ a["B"]},
    ),
    # ------------------------------------------------------------------ transposes
    (
        "transpose/naive_xy",
        """
__global__ void k(const float* in, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) out[x * H + y] = in[y * W + x];
}""",
        _b(
            {"grid": ["ceil_div(W, 16)", "ceil_div(H, 16)"], "block": [16, 16]},
            {"in": t(["H", "W"], "in"), "out": t(["W", "H"], "out"), "H": 30, "W": 17},
        ),
        "transpose",
        lambda a, s: {"out": a["in"].T},
    ),
    (
        "transpose/naive_yx_return",
        """
__global__ void k(float* dst, const float* src, int rows, int cols) {
    int r = threadIdx.y + blockIdx.y * blockDim.y;
    int c = threadIdx.x + blockIdx.x * blockDim.x;
    if (r >= rows || c >= cols) return;
    dst[c * rows + r] = src[r * cols + c];
}""",
        _b(
            {"grid": ["ceil_div(cols, 8)", "ceil_div(rows, 32)"], "block": [8, 32]},
            {
                "dst": t(["cols", "rows"], "out"),
                "src": t(["rows", "cols"], "in"),
                "rows": 40,
                "cols": 9,
            },
        ),
        "transpose",
        lambda a, s: {"dst": a["src"].T},
    ),
    (
        "transpose/shared_padded",
        """
#define TD 16
__global__ void k(float* o, const float* i, int h, int w) {
    __shared__ float tile[TD][TD + 1];
    int x = blockIdx.x * TD + threadIdx.x, y = blockIdx.y * TD + threadIdx.y;
    if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = i[y * w + x];
    __syncthreads();
    x = blockIdx.y * TD + threadIdx.x;
    y = blockIdx.x * TD + threadIdx.y;
    if (x < h && y < w) o[y * h + x] = tile[threadIdx.x][threadIdx.y];
}""",
        _b(
            {"grid": ["ceil_div(w, 16)", "ceil_div(h, 16)"], "block": [16, 16]},
            {"o": t(["w", "h"], "out"), "i": t(["h", "w"], "in"), "h": 35, "w": 20},
        ),
        "transpose",
        lambda a, s: {"o": a["i"].T},
    ),
    # ------------------------------------------------------------------ stencils
    (
        "stencil/three_point_interior",
        """
__global__ void k(const float* u, float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i < n - 1) v[i] = 0.25f * u[i - 1] + 0.5f * u[i] + 0.25f * u[i + 1];
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"u": t(["n"], "in"), "v": t(["n"], "out"), "n": 300},
        ),
        "stencil",
        lambda a, s: {
            "v": np.concatenate(
                [[0], 0.25 * a["u"][:-2] + 0.5 * a["u"][1:-1] + 0.25 * a["u"][2:], [0]]
            )
        },
    ),
    (
        "stencil/forward_diff_guarded",
        """
__global__ void k(float* d, const float* f, int len) {
    int j = threadIdx.x + blockDim.x * blockIdx.x;
    if (j + 1 < len) d[j] = f[j + 1] - f[j];
}""",
        _b(
            {"grid": ["ceil_div(len, 64)"], "block": [64]},
            {"d": t(["len"], "out"), "f": t(["len"], "in"), "len": 200},
        ),
        "stencil",
        lambda a, s: {"d": np.concatenate([np.diff(a["f"]), [0]])},
    ),
    (
        "stencil/2d_cross",
        """
__global__ void k(const float* a, float* b, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < W - 1 && y < H - 1)
        b[y * W + x] = a[(y - 1) * W + x] + a[(y + 1) * W + x] + a[y * W + x - 1] + a[y * W + x + 1];
}""",
        _b(
            {"grid": ["ceil_div(W, 16)", "ceil_div(H, 16)"], "block": [16, 16]},
            {"a": t(["H", "W"], "in"), "b": t(["H", "W"], "out"), "H": 20, "W": 23},
        ),
        "stencil",
        lambda a, s: {"b": _cross(a["a"])},
    ),
    # ------------------------------------------------------------------ gathers
    (
        "gather/rows_by_index",
        """
__global__ void k(float* out, const float* table, const int* ids, int n, int D) {
    int r = blockIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < D) out[r * D + c] = table[ids[r] * D + c];
}""",
        _b(
            {"grid": ["ceil_div(D, 32)", "n"], "block": [32]},
            {
                "out": t(["n", "D"], "out"),
                "table": t(["V", "D"], "in"),
                "ids": {"shape": ["n"], "dtype": "int32", "role": "in", "range": [0, "V"]},
                "n": 7,
                "D": 40,
                "V": 11,
            },
        ),
        "gather",
        lambda a, s: {"out": a["table"][a["ids"]]},
    ),
    (
        "gather/flat_lookup",
        """
__global__ void k(const float* src, const int* idx, float* dst, int m) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < m) dst[t] = src[idx[t]];
}""",
        _b(
            {"grid": ["ceil_div(m, 32)"], "block": [32]},
            {
                "src": t(["S"], "in"),
                "idx": {"shape": ["m"], "dtype": "int32", "role": "in", "range": [0, "S"]},
                "dst": t(["m"], "out"),
                "m": 50,
                "S": 13,
            },
        ),
        "gather",
        lambda a, s: {"dst": a["src"][a["idx"]]},
    ),
    (
        "gather/clamped",
        """
__global__ void k(const float* src, const int* idx, float* dst, int m, int S) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < m) { int j = idx[t]; j = j < 0 ? 0 : j; dst[t] = src[j]; }
}""",
        _b(
            {"grid": ["ceil_div(m, 32)"], "block": [32]},
            {
                "src": t(["S"], "in"),
                "idx": {"shape": ["m"], "dtype": "int32", "role": "in", "range": [0, "S"]},
                "dst": t(["m"], "out"),
                "m": 50,
                "S": 13,
            },
        ),
        "gather",
        lambda a, s: {"dst": a["src"][np.maximum(a["idx"], 0)]},
    ),
    # ------------------------------------------------------------------ compositions
    (
        "compose/softmax_thread_per_row",
        """
__global__ void k(float* y, const float* x, int R, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < R) {
        float m = -1e30f;
        for (int c = 0; c < C; c++) m = fmaxf(m, x[r * C + c]);
        float z = 0.0f;
        for (int c = 0; c < C; c++) z += expf(x[r * C + c] - m);
        for (int c = 0; c < C; c++) y[r * C + c] = expf(x[r * C + c] - m) / z;
    }
}""",
        _b(
            {"grid": ["ceil_div(R, 32)"], "block": [32]},
            {"y": t(["R", "C"], "out"), "x": t(["R", "C"], "in"), "R": 10, "C": 37},
        ),
        "softmax",
        lambda a, s: {"y": _softmax(a["x"])},
    ),
    (
        "compose/softmax_reread_output",
        """
__global__ void k(const float* in, float* out, int rows, int cols) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= rows) return;
    const float* p = in + i * cols;
    float* q = out + i * cols;
    float mx = p[0];
    for (int j = 1; j < cols; ++j) if (p[j] > mx) mx = p[j];
    float sum = 0.0f;
    for (int j = 0; j < cols; ++j) { q[j] = __expf(p[j] - mx); sum += q[j]; }
    for (int j = 0; j < cols; ++j) q[j] = q[j] / sum;
}""",
        _b(
            {"grid": ["ceil_div(rows, 16)"], "block": [16]},
            {
                "in": t(["rows", "cols"], "in"),
                "out": t(["rows", "cols"], "out"),
                "rows": 9,
                "cols": 20,
            },
        ),
        "softmax",
        lambda a, s: {"out": _softmax(a["in"])},
    ),
    (
        "compose/rmsnorm_block_tree",
        """
__global__ void k(float* y, const float* x, const float* g, int rows, int C) {
    __shared__ float red[64];
    int row = blockIdx.x;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) ss += x[row * C + c] * x[row * C + c];
    red[threadIdx.x] = ss;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float scale = rsqrtf(red[0] / C + 1e-5f);
    for (int c = threadIdx.x; c < C; c += blockDim.x) y[row * C + c] = x[row * C + c] * scale * g[c];
}""",
        _b(
            {"grid": ["rows"], "block": [64]},
            {
                "y": t(["rows", "C"], "out"),
                "x": t(["rows", "C"], "in"),
                "g": t(["C"], "in"),
                "rows": 5,
                "C": 150,
            },
        ),
        "norm",
        lambda a, s: {
            "y": a["x"] / np.sqrt((a["x"] ** 2).mean(axis=1, keepdims=True) + 1e-5) * a["g"]
        },
    ),
    (
        "compose/layernorm_thread_per_row",
        """
__global__ void k(float* out, const float* inp, int N, int C) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    float mean = 0.0f;
    for (int c = 0; c < C; c++) mean += inp[n * C + c];
    mean = mean / C;
    float var = 0.0f;
    for (int c = 0; c < C; c++) { float d = inp[n * C + c] - mean; var += d * d; }
    float rs = 1.0f / sqrtf(var / C + 1e-5f);
    for (int c = 0; c < C; c++) out[n * C + c] = (inp[n * C + c] - mean) * rs;
}""",
        _b(
            {"grid": ["ceil_div(N, 32)"], "block": [32]},
            {"out": t(["N", "C"], "out"), "inp": t(["N", "C"], "in"), "N": 6, "C": 30},
        ),
        "norm",
        lambda a, s: {
            "out": (a["inp"] - a["inp"].mean(1, keepdims=True))
            / np.sqrt(a["inp"].var(1, keepdims=True) + 1e-5)
        },
    ),
]


def _cross(a: np.ndarray) -> np.ndarray:
    b = np.zeros_like(a)
    b[1:-1, 1:-1] = a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
    return b


def _chunk_sums(x: np.ndarray, chunk: int) -> np.ndarray:
    return np.add.reduceat(x, np.arange(0, x.size, chunk))


VARIANTS.extend(
    [
        (
            "reduce/two_loads_template_tree",
            """
template <int B>
__global__ void k(const float* src, float* sums, int count) {
    __shared__ float acc[B];
    int me = threadIdx.x;
    int at = blockIdx.x * (2 * B) + me;
    float v = 0.0f;
    if (at < count) v = src[at];
    if (at + B < count) v += src[at + B];
    acc[me] = v;
    __syncthreads();
    for (int w = B / 2; w > 0; w >>= 1) {
        if (me < w) acc[me] += acc[me + w];
        __syncthreads();
    }
    if (me == 0) sums[blockIdx.x] = acc[0];
}
void launch(const float* s, float* o, int c) { k<64><<<(c + 127) / 128, 64>>>(s, o, c); }""",
            _b(
                {"grid": ["ceil_div(count, 128)"], "block": [64]},
                {
                    "src": t(["count"], "in"),
                    "sums": t(["ceil_div(count, 128)"], "out"),
                    "count": 1000,
                },
                [{"count": 129}],
            ),
            "reduce",
            lambda a, s: {"sums": _chunk_sums(a["src"], 128)},
        ),
        (
            "reduce/volatile_tail_device_fn",
            """
__device__ void tail(volatile float* m, unsigned int l) {
    float r = m[l];
    r += m[l + 32]; __syncwarp(); m[l] = r; __syncwarp();
    r += m[l + 16]; __syncwarp(); m[l] = r; __syncwarp();
    r += m[l + 8];  __syncwarp(); m[l] = r; __syncwarp();
    r += m[l + 4];  __syncwarp(); m[l] = r; __syncwarp();
    r += m[l + 2];  __syncwarp(); m[l] = r; __syncwarp();
    r += m[l + 1];  __syncwarp(); m[l] = r;
}
__global__ void k(const float* in, float* out, unsigned int n) {
    __shared__ float mem[64];
    unsigned int l = threadIdx.x;
    unsigned int g = blockIdx.x * 128 + l;
    float r = (g < n) ? in[g] : 0.0f;
    if (g + 64 < n) r += in[g + 64];
    mem[l] = r;
    __syncthreads();
    if (l < 32) tail(mem, l);
    if (l == 0) out[blockIdx.x] = mem[0];
}""",
            _b(
                {"grid": ["ceil_div(n, 128)"], "block": [64]},
                {"in": t(["n"], "in"), "out": t(["ceil_div(n, 128)"], "out"), "n": 700},
                [{"n": 64}],
            ),
            "reduce",
            lambda a, s: {"out": _chunk_sums(a["in"], 128)},
        ),
        (
            "reduce/tree_then_inline_warp_tail",
            """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float sm[128];
    int tid = threadIdx.x;
    int gid = blockIdx.x * blockDim.x + tid;
    sm[tid] = gid < n ? x[gid] : 0.0f;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 32; st >>= 1) {
        if (tid < st) sm[tid] += sm[tid + st];
        __syncthreads();
    }
    if (tid < 32) {
        float v = sm[tid];
        for (int o = 32; o > 0; o >>= 1) {
            v += sm[tid + o];
            __syncwarp();
            sm[tid] = v;
            __syncwarp();
        }
    }
    if (threadIdx.x == 0) y[blockIdx.x] = sm[0];
}""",
            _b(
                {"grid": ["ceil_div(n, 128)"], "block": [128]},
                {"x": t(["n"], "in"), "y": t(["ceil_div(n, 128)"], "out"), "n": 1000},
                [{"n": 200}],
            ),
            "reduce",
            lambda a, s: {"y": _chunk_sums(a["x"], 128)},
        ),
    ]
)


VARIANTS.extend(
    [
        (
            "compose/online_softmax_thread_per_row",
            """
__global__ void k(const float* x, float* y, int R, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float run_max = -1e30f;
    float run_sum = 0.0f;
    for (int c = 0; c < C; ++c) {
        float v = x[r * C + c];
        float nm = fmaxf(run_max, v);
        run_sum = run_sum * expf(run_max - nm) + expf(v - nm);
        run_max = nm;
    }
    for (int c = 0; c < C; ++c) y[r * C + c] = expf(x[r * C + c] - run_max) / run_sum;
}""",
            _b(
                {"grid": ["ceil_div(R, 32)"], "block": [32]},
                {"x": t(["R", "C"], "in"), "y": t(["R", "C"], "out"), "R": 40, "C": 33},
                [{"R": 3, "C": 1}],
            ),
            "softmax",
            lambda a, s: {"y": _softmax(a["x"])},
        ),
        (
            "compose/online_softmax_block_merge_swapped",
            """
__global__ void k(float* out, const float* in, int rows, int cols) {
    __shared__ float mx[64];
    __shared__ float sm[64];
    const int row = blockIdx.x;
    const float* src = in + row * cols;
    float m = -1e30f, d = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = src[j];
        float mn = fmaxf(v, m);
        d = expf(v - mn) + expf(m - mn) * d;
        m = mn;
    }
    mx[threadIdx.x] = m;
    sm[threadIdx.x] = d;
    __syncthreads();
    for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float a = mx[threadIdx.x], b = mx[threadIdx.x + s];
            float top = fmaxf(a, b);
            sm[threadIdx.x] = expf(a - top) * sm[threadIdx.x] + expf(b - top) * sm[threadIdx.x + s];
            mx[threadIdx.x] = top;
        }
        __syncthreads();
    }
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        out[row * cols + j] = expf(src[j] - mx[0]) / sm[0];
}""",
            _b(
                {"grid": ["rows"], "block": [64]},
                {
                    "out": t(["rows", "cols"], "out"),
                    "in": t(["rows", "cols"], "in"),
                    "rows": 5,
                    "cols": 200,
                },
                [{"rows": 2, "cols": 7}],
            ),
            "softmax",
            lambda a, s: {"out": _softmax(a["in"])},
        ),
        (
            "compose/online_softmax_guarded_rows_block32",
            """
#define NT 32
__global__ void k(float* p, const float* logits, int N, int V) {
    __shared__ float s_m[NT];
    __shared__ float s_d[NT];
    int n = blockIdx.x;
    int t = threadIdx.x;
    if (n < N) {
        float m = -3.0e38f;
        float d = 0.0f;
        for (int c = t; c < V; c += NT) {
            float z = logits[n * V + c];
            float m2 = fmaxf(m, z);
            d = d * expf(m - m2) + expf(z - m2);
            m = m2;
        }
        s_m[t] = m;
        s_d[t] = d;
    }
    __syncthreads();
    for (int w = NT / 2; w >= 1; w /= 2) {
        if (t < w) {
            float m1 = s_m[t];
            float m2 = s_m[t + w];
            float mm = fmaxf(m1, m2);
            s_d[t] = s_d[t] * expf(m1 - mm) + s_d[t + w] * expf(m2 - mm);
            s_m[t] = mm;
        }
        __syncthreads();
    }
    if (n < N) {
        float inv = 1.0f / s_d[0];
        for (int c = t; c < V; c += NT) p[n * V + c] = expf(logits[n * V + c] - s_m[0]) * inv;
    }
}""",
            _b(
                {"grid": ["N"], "block": [32]},
                {"p": t(["N", "V"], "out"), "logits": t(["N", "V"], "in"), "N": 6, "V": 100},
                [{"N": 1, "V": 31}],
            ),
            "softmax",
            lambda a, s: {"p": _softmax(a["logits"])},
        ),
    ]
)


def _first_max(v: np.ndarray) -> np.ndarray:
    return np.argmax(v, axis=1).astype(np.int32)


def _last_min(v: np.ndarray) -> np.ndarray:
    return (v.shape[1] - 1 - np.argmin(v[:, ::-1], axis=1)).astype(np.int32)


def _nearest(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    d = ((p[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d, axis=1).astype(np.int32)


#: index-valued reductions (argmax / argmin): values are floor(2x), so ties are common and the
#: CUDA loop's tie rule (strict: first index; non-strict: last index) is what is checked
ARG_VARIANTS = [
    (
        "argreduce/thread_row_first_max",
        """
#include <cfloat>
__global__ void k(const float* x, int* idx, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float best = -FLT_MAX;
    int bi = 0;
    for (int c = 0; c < cols; ++c) {
        float v = floorf(2.0f * x[r * cols + c]);
        if (v > best) { best = v; bi = c; }
    }
    idx[r] = bi;
}""",
        _b(
            {"grid": ["ceil_div(rows, 128)"], "block": [128]},
            {
                "x": t(["rows", "cols"], "in"),
                "idx": t(["rows"], "out", "int32"),
                "rows": 300,
                "cols": 77,
            },
            [{"rows": 129, "cols": 1000}, {"rows": 5, "cols": 3}],
        ),
        "reduce",
        lambda a, s: {"idx": _first_max(np.floor(2 * a["x"]))},
    ),
    (
        "argreduce/guarded_last_min_ge",
        """
__global__ void k(const float* data, int* where, int n, int m) {
    int row = threadIdx.x + blockDim.x * blockIdx.x;
    if (row < n) {
        int pos = -1;
        float lo = 1e30f;
        for (int j = 0; j < m; j += 1) {
            float e = floorf(data[row * m + j] * 2.0f);
            if (lo >= e) { pos = j; lo = e; }
        }
        where[row] = pos;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {"data": t(["n", "m"], "in"), "where": t(["n"], "out", "int32"), "n": 200, "m": 40},
            [{"n": 131, "m": 129}, {"n": 1, "m": 7}],
        ),
        "reduce",
        lambda a, s: {"where": _last_min(np.floor(2 * a["data"]))},
    ),
    (
        "argreduce/warp_xor_pairs",
        """
#include <cfloat>
__global__ void k(const float* logits, int* out, int rows, int V) {
    int row = blockIdx.x * 4 + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    float mv = -INFINITY;
    int mi = -1;
    for (int c = lane; c < V; c += 32) {
        float v = floorf(2.0f * logits[row * V + c]);
        if (v > mv) { mv = v; mi = c; }
    }
    for (int o = 1; o < 32; o *= 2) {
        float ov = __shfl_xor_sync(0xffffffff, mv, o);
        int oi = __shfl_xor_sync(0xffffffff, mi, o);
        if (mv < ov || (ov == mv && oi < mi)) { mv = ov; mi = oi; }
    }
    if (lane == 0) out[row] = mi;
}""",
        _b(
            {"grid": ["ceil_div(rows, 4)"], "block": [128]},
            {
                "logits": t(["rows", "V"], "in"),
                "out": t(["rows"], "out", "int32"),
                "rows": 50,
                "V": 300,
            },
            [{"rows": 130, "V": 33}, {"rows": 3, "V": 1000}],
        ),
        "reduce",
        lambda a, s: {"out": _first_max(np.floor(2 * a["logits"]))},
    ),
    (
        "argreduce/nearest_centroid",
        """
__global__ void k(const float* pts, const float* ctr, int* label, int n, int k, int d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float bd = 3.0e38f;
        int bc = 0;
        for (int c = 0; c < k; c++) {
            float s = 0.0f;
            for (int f = 0; f < d; f++) {
                float t = pts[i * d + f] - ctr[c * d + f];
                s += t * t;
            }
            if (s < bd) { bd = s; bc = c; }
        }
        label[i] = bc;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {
                "pts": t(["n", "d"], "in"),
                "ctr": t(["k", "d"], "in"),
                "label": t(["n"], "out", "int32"),
                "n": 300,
                "k": 7,
                "d": 5,
            },
            [{"n": 129, "k": 2, "d": 1}, {"n": 1000, "k": 33, "d": 3}],
        ),
        "reduce",
        lambda a, s: {"label": _nearest(a["pts"], a["ctr"])},
    ),
    (
        "argreduce/int_keys_first_min",
        """
__global__ void k(const int* cost, int* pick, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int best = 2147483647;
    int at = 0;
    for (int c = 0; c < cols; c++) {
        int v = cost[r * cols + c];
        if (v < best) { best = v; at = c; }
    }
    pick[r] = at;
}""",
        _b(
            {"grid": ["ceil_div(rows, 128)"], "block": [128]},
            {
                "cost": t(["rows", "cols"], "in", "int32", range=[-20, 20]),
                "pick": t(["rows"], "out", "int32"),
                "rows": 260,
                "cols": 45,
            },
            [{"rows": 129, "cols": 1}, {"rows": 3, "cols": 300}],
        ),
        "reduce",
        lambda a, s: {"pick": np.argmin(a["cost"], axis=1).astype(np.int32)},
    ),
    (
        "argreduce/int_keys_last_max_ge",
        """
__global__ void k(int* out, const int* votes, int n, int m) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) {
        int hi = -1;
        int who = -1;
        for (int j = 0; j < m; ++j) {
            int v = votes[i * m + j] * 2 + 1;
            if (v >= hi) { hi = v; who = j; }
        }
        out[i] = who;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {
                "out": t(["n"], "out", "int32"),
                "votes": t(["n", "m"], "in", "int32", range=[0, 9]),
                "n": 150,
                "m": 20,
            },
            [{"n": 131, "m": 130}, {"n": 2, "m": 3}],
        ),
        "reduce",
        lambda a, s: {
            "out": (a["votes"].shape[1] - 1 - np.argmax(a["votes"][:, ::-1], axis=1)).astype(
                np.int32
            )
        },
    ),
]
VARIANTS.extend(ARG_VARIANTS)

#: whole-vector totals added into one element per block: a per-block value of the block's sum
#: (scaled by an invariant) and two-level warp shuffles through shared memory; each lifts to one
#: reduction over the vector and ports as a whole-vector reduction (tests/port)
TOTAL_VARIANTS = [
    (
        "total/scaled_block_share",
        """
__global__ void k(const float* a, const float* b, float* out, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    int g = blockIdx.x * 128 + t;
    float d = g < n ? fabsf(a[g] - b[g]) : 0.0f;
    s[t] = d;
    __syncthreads();
    for (int w = 64; w >= 1; w >>= 1) {
        if (t < w) s[t] += s[t + w];
        __syncthreads();
    }
    if (t == 0) atomicAdd(out, s[0] * (1.0f / (float)n));
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"a": t(["n"], "in"), "b": t(["n"], "in"), "out": t([1], "inout"), "n": 1000},
            [{"n": 129}, {"n": 5000}],
        ),
        "reduce",
        lambda a, s: {"out": a["out"] + np.abs(a["a"] - a["b"]).sum() / s["n"]},
    ),
    (
        "total/warp_xor_then_shared",
        """
__global__ void k(const float* x, float* sum, int n) {
    __shared__ float part[8];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        acc += x[i];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, o);
    int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    if (l == 0) part[w] = acc;
    __syncthreads();
    if (w == 0) {
        float v = l < 8 ? part[l] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
        if (l == 0) atomicAdd(sum, v);
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 1024)"], "block": [256]},
            {"x": t(["n"], "in"), "sum": t([1], "inout"), "n": 3000},
            [{"n": 129}, {"n": 20000}],
        ),
        "reduce",
        lambda a, s: {"sum": a["sum"] + a["x"].sum()},
    ),
    (
        "total/block_mean_shares",
        """
#define B 256
__global__ void k(const float* v, float* mean, int count) {
    __shared__ float buf[B];
    int i = threadIdx.x + B * blockIdx.x;
    buf[threadIdx.x] = (i < count) ? v[i] * v[i] : 0.0f;
    __syncthreads();
    for (int s = B / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(mean, buf[0] / count);
}""",
        _b(
            {"grid": ["ceil_div(count, 256)"], "block": [256]},
            {"v": t(["count"], "in"), "mean": t([1], "inout"), "count": 1000},
            [{"count": 257}, {"count": 4000}],
        ),
        "reduce",
        lambda a, s: {"mean": a["mean"] + (a["v"] ** 2).sum() / s["count"]},
    ),
]
VARIANTS.extend(TOTAL_VARIANTS)


def _window(x: np.ndarray, w: np.ndarray, left: int) -> np.ndarray:
    """``y[i] = sum_k w[k] * x[i + k - left]``, zero outside ``x``."""
    n, taps = x.size, w.size
    pad = np.concatenate([np.zeros(left), x, np.zeros(taps)])
    return sum(w[k] * pad[k : k + n] for k in range(taps))


#: 1-D windows with a zero boundary: a loop over the taps around each element (ported as a flat
#: vector and one padded shifted load per tap)
WINDOW_VARIANTS = [
    (
        "window/centred_guarded_taps",
        """
__global__ void k(const float* in, const float* w, float* out, int n) {
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    if (g < n) {
        float r = 0.0f;
        for (int o = -3; o <= 3; o++) {
            int j = g + o;
            r += w[o + 3] * ((j >= 0 && j < n) ? in[j] : 0.0f);
        }
        out[g] = r;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"in": t(["n"], "in"), "w": t([7], "in"), "out": t(["n"], "out"), "n": 8000},
            [{"n": 129}, {"n": 5}],
        ),
        "stencil",
        lambda a, s: {"out": _window(a["in"], a["w"], 3)},
    ),
    (
        "window/causal_fir_early_return",
        """
#define TAPS 5
__global__ void k(const float* x, const float* h, float* y, int len) {
    int i = blockIdx.x * 256 + threadIdx.x;
    if (i >= len) return;
    float acc = 0.0f;
    for (int k = 0; k < TAPS; ++k)
        acc += (i - k >= 0 ? x[i - k] : 0.0f) * h[k];
    y[i] = acc;
}""",
        _b(
            {"grid": ["ceil_div(len, 256)"], "block": [256]},
            {"x": t(["len"], "in"), "h": t([5], "in"), "y": t(["len"], "out"), "len": 3000},
            [{"len": 131}, {"len": 3}],
        ),
        "stencil",
        lambda a, s: {"y": _window(a["x"], a["h"][::-1], 4)},
    ),
    (
        "window/forward_box_sum",
        """
__global__ void k(const float* src, float* dst, int count) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx < count) {
        float s = 0.0f;
        for (int d = 0; d < 4; d++) s += idx + d < count ? src[idx + d] : 0.0f;
        dst[idx] = 0.25f * s;
    }
}""",
        _b(
            {"grid": ["ceil_div(count, 64)"], "block": [64]},
            {"src": t(["count"], "in"), "dst": t(["count"], "out"), "count": 1000},
            [{"count": 129}, {"count": 2}],
        ),
        "stencil",
        lambda a, s: {"dst": 0.25 * _window(a["src"], np.ones(4), 0)},
    ),
]
VARIANTS.extend(WINDOW_VARIANTS)

#: 1-D windows staged through shared memory with halos (the block's elements, then the halo
#: cells loaded by edge threads): the reads resolve to the staged global elements piece by piece,
#: and the pieces join into one zero-padded shifted read
HALO_VARIANTS = [
    (
        "halo/edge_threads_radius1",
        """
#define B 64
__global__ void k(const float* u, float* v, int n) {
    __shared__ float s[B + 2];
    int g = blockIdx.x * B + threadIdx.x;
    int l = threadIdx.x + 1;
    s[l] = g < n ? u[g] : 0.0f;
    if (threadIdx.x == 0) s[0] = (g >= 1 && g - 1 < n) ? u[g - 1] : 0.0f;
    if (threadIdx.x == B - 1) s[B + 1] = g + 1 < n ? u[g + 1] : 0.0f;
    __syncthreads();
    if (g < n) v[g] = 0.25f * s[l - 1] + 0.5f * s[l] + 0.25f * s[l + 1];
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {"u": t(["n"], "in"), "v": t(["n"], "out"), "n": 1000},
            [{"n": 129}, {"n": 2}],
        ),
        "stencil",
        lambda a, s: {"v": _window(a["u"], np.array([0.25, 0.5, 0.25]), 1)},
    ),
    (
        "halo/left_right_blocks_radius2",
        """
#define R 2
#define BS 256
__global__ void k(const float* x, const float* c, float* y, int len) {
    __shared__ float win[BS + 2 * R];
    int t = threadIdx.x;
    int i = BS * blockIdx.x + t;
    win[t + R] = (i < len) ? x[i] : 0.0f;
    if (t < R) win[t] = (i - R >= 0 && i - R < len) ? x[i - R] : 0.0f;
    if (t >= BS - R) win[t + 2 * R] = (i + R < len) ? x[i + R] : 0.0f;
    __syncthreads();
    if (i >= len) return;
    float acc = 0.0f;
    for (int k = 0; k <= 2 * R; ++k) acc += c[k] * win[t + k];
    y[i] = acc;
}""",
        _b(
            {"grid": ["ceil_div(len, 256)"], "block": [256]},
            {"x": t(["len"], "in"), "c": t([5], "in"), "y": t(["len"], "out"), "len": 3000},
            [{"len": 257}, {"len": 3}],
        ),
        "stencil",
        lambda a, s: {"y": _window(a["x"], a["c"], 2)},
    ),
]
HALO_VARIANTS.append(
    (
        "halo/box_radius4_block32",
        """
#define RAD 4
#define TB 32
__global__ void k(const float* a, float* b, int n) {
    __shared__ float sh[TB + 2 * RAD];
    int gi = blockDim.x * blockIdx.x + threadIdx.x;
    int li = threadIdx.x + RAD;
    sh[li] = gi < n ? a[gi] : 0.0f;
    if (threadIdx.x < RAD) {
        int lft = gi - RAD, rgt = gi + TB;
        sh[threadIdx.x] = (lft >= 0 && lft < n) ? a[lft] : 0.0f;
        sh[li + TB] = rgt < n ? a[rgt] : 0.0f;
    }
    __syncthreads();
    if (gi < n) {
        float m = 0.0f;
        for (int d = -RAD; d <= RAD; d++) m += sh[li + d];
        b[gi] = m / 9.0f;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 32)"], "block": [32]},
            {"a": t(["n"], "in"), "b": t(["n"], "out"), "n": 1000},
            [{"n": 129}, {"n": 3}],
        ),
        "stencil",
        lambda a, s: {"b": _window(a["a"], np.ones(9), 4) / 9.0},
    )
)
VARIANTS.extend(HALO_VARIANTS)


def _five_point(a: np.ndarray, w: float) -> np.ndarray:
    """Interior ``w * (centre + 4 neighbours)``, boundary copied."""
    b = a.copy()
    if a.shape[0] > 2 and a.shape[1] > 2:
        b[1:-1, 1:-1] = w * (
            a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
        )
    return b


def _cross_zero(a: np.ndarray) -> np.ndarray:
    """``centre - 0.25 * (4 neighbours)`` with zero outside the array."""
    p = np.pad(a, 1)
    return a - 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


#: 2-D tiles staged through shared memory with a halo: a cooperative strided load of the whole
#: padded tile (one flat counter split into row and column), or edge threads loading the halo
TILE_VARIANTS = [
    (
        "tile2d/strided_load_boundary_copy",
        """
#define T 8
__global__ void k(const float* src, float* dst, int h, int w) {
    __shared__ float s[T + 2][T + 2];
    int x0 = blockIdx.x * T - 1, y0 = blockIdx.y * T - 1;
    int me = threadIdx.x + T * threadIdx.y;
    for (int q = me; q < (T + 2) * (T + 2); q += T * T) {
        int r = q / (T + 2), c = q % (T + 2);
        int gy = y0 + r, gx = x0 + c;
        s[r][c] = (gy >= 0 && gy < h && gx >= 0 && gx < w) ? src[gy * w + gx] : 0.0f;
    }
    __syncthreads();
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x >= w || y >= h) return;
    float v = s[threadIdx.y + 1][threadIdx.x + 1];
    if (x > 0 && y > 0 && x < w - 1 && y < h - 1)
        v = 0.25f * (v + s[threadIdx.y][threadIdx.x + 1] + s[threadIdx.y + 2][threadIdx.x + 1]
                     + s[threadIdx.y + 1][threadIdx.x] + s[threadIdx.y + 1][threadIdx.x + 2]);
    dst[y * w + x] = v;
}""",
        _b(
            {"grid": ["ceil_div(w, 8)", "ceil_div(h, 8)"], "block": [8, 8]},
            {"src": t(["h", "w"], "in"), "dst": t(["h", "w"], "out"), "h": 40, "w": 50},
            [{"h": 129, "w": 3}, {"h": 2, "w": 130}],
        ),
        "stencil",
        lambda a, s: {"dst": _five_point(a["src"], 0.25)},
    ),
    (
        "tile2d/jacobi_else_branch",
        """
__global__ void k(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[18][18];
    int tx = threadIdx.x, ty = threadIdx.y;
    for (int i = ty * 16 + tx; i < 324; i += 256) {
        int gr = blockIdx.y * 16 - 1 + i / 18;
        int gc = blockIdx.x * 16 - 1 + i % 18;
        tile[i / 18][i % 18] = (gr >= 0 && gc >= 0 && gr < rows && gc < cols) ? in[gr * cols + gc] : 0.0f;
    }
    __syncthreads();
    int r = blockIdx.y * 16 + ty, c = blockIdx.x * 16 + tx;
    if (r < rows && c < cols) {
        if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1) {
            out[r * cols + c] = tile[ty + 1][tx + 1];
        } else {
            out[r * cols + c] = 0.2f * (tile[ty + 1][tx + 1] + tile[ty][tx + 1]
                + tile[ty + 2][tx + 1] + tile[ty + 1][tx] + tile[ty + 1][tx + 2]);
        }
    }
}""",
        _b(
            {"grid": ["ceil_div(cols, 16)", "ceil_div(rows, 16)"], "block": [16, 16]},
            {
                "in": t(["rows", "cols"], "in"),
                "out": t(["rows", "cols"], "out"),
                "rows": 33,
                "cols": 20,
            },
            [{"rows": 3, "cols": 129}, {"rows": 130, "cols": 17}],
        ),
        "stencil",
        lambda a, s: {"out": _five_point(a["in"], 0.2)},
    ),
    (
        "tile2d/zero_padded_laplacian",
        """
#define BS 16
__global__ void k(const float* u, float* lap, int ny, int nx) {
    __shared__ float t[BS + 2][BS + 2];
    int lin = threadIdx.y * BS + threadIdx.x;
    for (int p = lin; p < (BS + 2) * (BS + 2); p += BS * BS) {
        int yy = blockIdx.y * BS + p / (BS + 2) - 1;
        int xx = blockIdx.x * BS + p % (BS + 2) - 1;
        t[p / (BS + 2)][p % (BS + 2)] =
            (yy >= 0 && yy < ny && xx >= 0 && xx < nx) ? u[yy * nx + xx] : 0.0f;
    }
    __syncthreads();
    int y = blockIdx.y * BS + threadIdx.y, x = blockIdx.x * BS + threadIdx.x;
    if (y < ny && x < nx)
        lap[y * nx + x] = t[threadIdx.y + 1][threadIdx.x + 1]
            - 0.25f * (t[threadIdx.y][threadIdx.x + 1] + t[threadIdx.y + 2][threadIdx.x + 1]
                       + t[threadIdx.y + 1][threadIdx.x] + t[threadIdx.y + 1][threadIdx.x + 2]);
}""",
        _b(
            {"grid": ["ceil_div(nx, 16)", "ceil_div(ny, 16)"], "block": [16, 16]},
            {"u": t(["ny", "nx"], "in"), "lap": t(["ny", "nx"], "out"), "ny": 40, "nx": 33},
            [{"ny": 129, "nx": 5}, {"ny": 1, "nx": 200}],
        ),
        "stencil",
        lambda a, s: {"lap": _cross_zero(a["u"])},
    ),
]
VARIANTS.extend(TILE_VARIANTS)


def _block_cumsum(x: np.ndarray, block: int) -> np.ndarray:
    out = np.empty_like(x)
    for s in range(0, x.size, block):
        out[s : s + block] = np.cumsum(x[s : s + block])
    return out


#: block-local inclusive prefix sums through shared memory (Hillis-Steele): if/else or ternary
#: steps into a double buffer, or one buffer updated in place between two barriers
SCAN_VARIANTS = [
    (
        "scan/ternary_double_buffer",
        """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float buf[2][128];
    int t = threadIdx.x, g = blockIdx.x * 128 + t;
    int o = 0, i = 1;
    buf[o][t] = g < n ? x[g] : 0.0f;
    __syncthreads();
    for (int s = 1; s < 128; s *= 2) {
        o = 1 - o;
        i = 1 - o;
        buf[o][t] = t >= s ? buf[i][t] + buf[i][t - s] : buf[i][t];
        __syncthreads();
    }
    if (g < n) y[g] = buf[o][t];
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"x": t(["n"], "in"), "y": t(["n"], "out"), "n": 1000},
            [{"n": 129}, {"n": 3}],
        ),
        "scan",
        lambda a, s: {"y": _block_cumsum(a["x"], 128)},
    ),
    (
        "scan/in_place_two_barriers",
        """
#define B 64
__global__ void k(const float* in, float* out, int len) {
    __shared__ float s[B];
    int tid = threadIdx.x;
    int i = blockIdx.x * B + tid;
    s[tid] = (i < len) ? in[i] : 0.0f;
    __syncthreads();
    for (int off = 1; off < B; off <<= 1) {
        float v = s[tid];
        if (tid >= off) v += s[tid - off];
        __syncthreads();
        s[tid] = v;
        __syncthreads();
    }
    if (i < len) out[i] = s[tid];
}""",
        _b(
            {"grid": ["ceil_div(len, 64)"], "block": [64]},
            {"in": t(["len"], "in"), "out": t(["len"], "out"), "len": 500},
            [{"len": 65}, {"len": 130}],
        ),
        "scan",
        lambda a, s: {"out": _block_cumsum(a["in"], 64)},
    ),
    (
        "scan/if_else_pingpong_warp",
        """
__global__ void k(const float* a, float* c, int count) {
    __shared__ float pp[2][32];
    int lane = threadIdx.x;
    int idx = blockIdx.x * 32 + lane;
    int cur = 0;
    pp[cur][lane] = idx < count ? a[idx] : 0.0f;
    __syncthreads();
    for (int d = 1; d < 32; d <<= 1) {
        int nxt = 1 - cur;
        if (lane >= d) pp[nxt][lane] = pp[cur][lane - d] + pp[cur][lane];
        else pp[nxt][lane] = pp[cur][lane];
        __syncthreads();
        cur = nxt;
    }
    if (idx < count) c[idx] = pp[cur][lane];
}""",
        _b(
            {"grid": ["ceil_div(count, 32)"], "block": [32]},
            {"a": t(["count"], "in"), "c": t(["count"], "out"), "count": 300},
            [{"count": 33}, {"count": 1}],
        ),
        "scan",
        lambda a, s: {"c": _block_cumsum(a["a"], 32)},
    ),
]
VARIANTS.extend(SCAN_VARIANTS)


def _block_sums(x: np.ndarray, block: int) -> np.ndarray:
    return np.array([x[s : s + block].sum() for s in range(0, x.size, block)])


#: work-efficient block scans in place (Blelloch up-sweep / down-sweep, Brent-Kung): two elements
#: per thread, interleaved or in halves, a padded (bank-conflict-free) layout, the chunk total
#: taken from the root before it is cleared, exclusive and inclusive results
BLELLOCH_VARIANTS = [
    (
        "blelloch/halves_if_else_staging",
        """
#define B 64
__global__ void k(const float* x, float* y, int len) {
    __shared__ float s[2 * B];
    int tid = threadIdx.x;
    int base = blockIdx.x * (2 * B);
    int ai = tid, bi = tid + B;
    if (base + ai < len) s[ai] = x[base + ai]; else s[ai] = 0.0f;
    if (base + bi < len) s[bi] = x[base + bi]; else s[bi] = 0.0f;
    int off = 1;
    for (int d = B; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int lo = off * (2 * tid + 1) - 1;
            int hi = lo + off;
            s[hi] += s[lo];
        }
        off <<= 1;
    }
    if (tid == 0) s[2 * B - 1] = 0.0f;
    for (int d = 1; d < 2 * B; d <<= 1) {
        off >>= 1;
        __syncthreads();
        if (tid < d) {
            int lo = off * (2 * tid + 1) - 1;
            int hi = lo + off;
            float v = s[lo];
            s[lo] = s[hi];
            s[hi] = s[hi] + v;
        }
    }
    __syncthreads();
    if (base + ai < len) y[base + ai] = s[ai];
    if (base + bi < len) y[base + bi] = s[bi];
}""",
        _b(
            {"grid": ["ceil_div(len, 128)"], "block": [64]},
            {"x": t(["len"], "in"), "y": t(["len"], "out"), "len": 1000},
            [{"len": 129}, {"len": 5}],
        ),
        "scan",
        lambda a, s: {"y": _block_cumsum(a["x"], 128) - a["x"]},
    ),
    (
        "blelloch/padded_banks",
        """
#define NB 32
#define LOG_BANKS 4
#define PAD(i) ((i) >> LOG_BANKS)
__global__ void k(const float* in, float* out, int n) {
    __shared__ float sh[2 * NB + (2 * NB >> LOG_BANKS)];
    int t = threadIdx.x;
    int start = 2 * NB * blockIdx.x;
    int ai = t;
    int bi = t + NB;
    sh[ai + PAD(ai)] = start + ai < n ? in[start + ai] : 0.0f;
    sh[bi + PAD(bi)] = start + bi < n ? in[start + bi] : 0.0f;
    int offset = 1;
    for (int d = NB; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int a = offset * (2 * t + 1) - 1;
            int b = offset * (2 * t + 2) - 1;
            a += PAD(a);
            b += PAD(b);
            sh[b] += sh[a];
        }
        offset *= 2;
    }
    if (t == 0) sh[2 * NB - 1 + PAD(2 * NB - 1)] = 0.0f;
    for (int d = 1; d < 2 * NB; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int a = offset * (2 * t + 1) - 1;
            int b = offset * (2 * t + 2) - 1;
            a += PAD(a);
            b += PAD(b);
            float tmp = sh[a];
            sh[a] = sh[b];
            sh[b] += tmp;
        }
    }
    __syncthreads();
    if (start + ai < n) out[start + ai] = sh[ai + PAD(ai)];
    if (start + bi < n) out[start + bi] = sh[bi + PAD(bi)];
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [32]},
            {"in": t(["n"], "in"), "out": t(["n"], "out"), "n": 1000},
            [{"n": 65}, {"n": 7}],
        ),
        "scan",
        lambda a, s: {"out": _block_cumsum(a["in"], 64) - a["in"]},
    ),
    (
        "blelloch/brent_kung_inclusive_256",
        """
#define SECTION 512
__global__ void k(const float* X, float* Y, int InputSize) {
    __shared__ float XY[SECTION];
    unsigned int i = 2 * blockIdx.x * blockDim.x + threadIdx.x;
    XY[threadIdx.x] = i < InputSize ? X[i] : 0.0f;
    XY[threadIdx.x + blockDim.x] = i + blockDim.x < InputSize ? X[i + blockDim.x] : 0.0f;
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        int index = (threadIdx.x + 1) * 2 * stride - 1;
        if (index < SECTION) XY[index] += XY[index - stride];
    }
    for (int stride = SECTION / 4; stride > 0; stride /= 2) {
        __syncthreads();
        int index = (threadIdx.x + 1) * stride * 2 - 1;
        if (index + stride < SECTION) XY[index + stride] += XY[index];
    }
    __syncthreads();
    if (i < InputSize) Y[i] = XY[threadIdx.x];
    if (i + blockDim.x < InputSize) Y[i + blockDim.x] = XY[threadIdx.x + blockDim.x];
}""",
        _b(
            {"grid": ["ceil_div(InputSize, 512)"], "block": [256]},
            {"X": t(["InputSize"], "in"), "Y": t(["InputSize"], "out"), "InputSize": 1500},
            [{"InputSize": 513}, {"InputSize": 100}],
        ),
        "scan",
        lambda a, s: {"Y": _block_cumsum(a["X"], 512)},
    ),
    (
        "blelloch/interleaved_totals_plus_input",
        """
__global__ void k(const float* src, float* dst, float* sums, int count) {
    __shared__ float buf[128];
    int lane = threadIdx.x;
    int first = blockIdx.x * 128 + 2 * lane;
    buf[2 * lane] = first < count ? src[first] : 0.0f;
    buf[2 * lane + 1] = first + 1 < count ? src[first + 1] : 0.0f;
    int step = 1;
    for (int active = 64; active > 0; active /= 2) {
        __syncthreads();
        if (lane < active) {
            int left = step * (2 * lane + 1) - 1;
            int right = step * 2 * (lane + 1) - 1;
            buf[right] = buf[left] + buf[right];
        }
        step *= 2;
    }
    __syncthreads();
    if (lane == 63) {
        sums[blockIdx.x] = buf[127];
        buf[127] = 0.0f;
    }
    for (int active = 1; active < 128; active *= 2) {
        step /= 2;
        __syncthreads();
        if (lane < active) {
            int left = step * (2 * lane + 1) - 1;
            int right = step * 2 * (lane + 1) - 1;
            float keep = buf[right];
            buf[right] += buf[left];
            buf[left] = keep;
        }
    }
    __syncthreads();
    if (first < count) dst[first] = buf[2 * lane] + src[first];
    if (first + 1 < count) dst[first + 1] = buf[2 * lane + 1] + src[first + 1];
}""",
        _b(
            {"grid": ["ceil_div(count, 128)"], "block": [64]},
            {
                "src": t(["count"], "in"),
                "dst": t(["count"], "out"),
                "sums": t(["ceil_div(count, 128)"], "out"),
                "count": 1000,
            },
            [{"count": 129}, {"count": 3}],
        ),
        "scan",
        lambda a, s: {"dst": _block_cumsum(a["src"], 128), "sums": _block_sums(a["src"], 128)},
    ),
]
VARIANTS.extend(BLELLOCH_VARIANTS)


def _conv2d_zero(img: np.ndarray, filt: np.ndarray) -> np.ndarray:
    """``out[i, j] = sum_kl filt[k, l] * img[i + k - R, j + l - R]``, zero outside ``img``."""
    r = filt.shape[0] // 2
    p = np.pad(img, r)
    h, w = img.shape
    return sum(
        filt[k, m] * p[k : k + h, m : m + w]
        for k in range(filt.shape[0])
        for m in range(filt.shape[1])
    )


#: 2-D windows with a zero boundary: loops over the taps around the row tile
WINDOW2D_VARIANTS = [
    (
        "window2d/box_blur_early_return",
        """
__global__ void k(const float* src, float* dst, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols) return;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int y = r + dy, x = c + dx;
            if (y >= 0 && y < rows && x >= 0 && x < cols) s += src[y * cols + x];
        }
    dst[r * cols + c] = s / 9.0f;
}""",
        _b(
            {"grid": ["ceil_div(cols, 16)", "ceil_div(rows, 4)"], "block": [16, 4]},
            {
                "src": t(["rows", "cols"], "in"),
                "dst": t(["rows", "cols"], "out"),
                "rows": 40,
                "cols": 50,
            },
            [{"rows": 129, "cols": 3}, {"rows": 1, "cols": 130}],
        ),
        "stencil",
        lambda a, s: {"dst": _conv2d_zero(a["src"], np.ones((3, 3))) / 9.0},
    ),
    (
        "window2d/filter5x5_guarded",
        """
__global__ void k(const float* im, const float* f, float* o, int H, int W) {
    int x = threadIdx.x + blockIdx.x * 32;
    int y = threadIdx.y + blockIdx.y * 8;
    if (x < W && y < H) {
        float acc = 0.0f;
        for (int a = 0; a < 5; ++a) {
            for (int b = 0; b < 5; ++b) {
                int yy = y + a - 2, xx = x + b - 2;
                float v = (yy >= 0 && yy < H && xx >= 0 && xx < W) ? im[yy * W + xx] : 0.0f;
                acc += f[a * 5 + b] * v;
            }
        }
        o[y * W + x] = acc;
    }
}""",
        _b(
            {"grid": ["ceil_div(W, 32)", "ceil_div(H, 8)"], "block": [32, 8]},
            {
                "im": t(["H", "W"], "in"),
                "f": t([5, 5], "in"),
                "o": t(["H", "W"], "out"),
                "H": 20,
                "W": 70,
            },
            [{"H": 130, "W": 4}, {"H": 3, "W": 129}],
        ),
        "stencil",
        lambda a, s: {"o": _conv2d_zero(a["im"], a["f"])},
    ),
]
WINDOW2D_VARIANTS.append(
    (
        "window2d/constant_table_unrolled",
        """
__constant__ float K3[9] = {1.0f, 2.0f, 1.0f, 2.0f, 4.0f, 2.0f, 1.0f, 2.0f, 1.0f};
__global__ void k(const float* in, float* out, int h, int w) {
    int j = blockIdx.x * 8 + threadIdx.x, i = blockIdx.y * 8 + threadIdx.y;
    if (i < h && j < w) {
        float acc = 0.0f;
        for (int q = 0; q < 9; q++) {
            int y = i + q / 3 - 1, x = j + q % 3 - 1;
            acc += K3[q] * ((y >= 0 && y < h && x >= 0 && x < w) ? in[y * w + x] : 0.0f);
        }
        out[i * w + j] = acc * 0.0625f;
    }
}""",
        _b(
            {"grid": ["ceil_div(w, 8)", "ceil_div(h, 8)"], "block": [8, 8]},
            {"in": t(["h", "w"], "in"), "out": t(["h", "w"], "out"), "h": 30, "w": 40},
            [{"h": 129, "w": 2}, {"h": 2, "w": 131}],
        ),
        "stencil",
        lambda a, s: {
            "out": _conv2d_zero(a["in"], np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16.0)
        },
    )
)
VARIANTS.extend(WINDOW2D_VARIANTS)


def _causal_softmax(x: np.ndarray) -> np.ndarray:
    t = x.shape[-1]
    mask = np.tril(np.ones((t, t), bool))
    z = np.where(mask, x, -np.inf)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return np.where(mask, e / e.sum(axis=-1, keepdims=True), 0.0)


#: online softmax: each lane folds its share of the row into a (max, normaliser) pair, and the
#: pairs are merged across the warp with shuffles (xor or down then broadcast); causal rows fold
#: only the visible prefix
ONLINE_VARIANTS = [
    (
        "online/xor_pairs_rows",
        """
__global__ void k(const float* x, float* y, int rows, int C) {
    int r = blockIdx.x * 4 + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    float m = -INFINITY, d = 0.0f;
    for (int c = lane; c < C; c += 32) {
        float v = x[r * C + c];
        float nm = fmaxf(m, v);
        d = d * expf(m - nm) + expf(v - nm);
        m = nm;
    }
    for (int o = 1; o < 32; o <<= 1) {
        float om = __shfl_xor_sync(0xffffffff, m, o), od = __shfl_xor_sync(0xffffffff, d, o);
        float nm = fmaxf(m, om);
        d = d * expf(m - nm) + od * expf(om - nm);
        m = nm;
    }
    for (int c = lane; c < C; c += 32) y[r * C + c] = expf(x[r * C + c] - m) / d;
}""",
        _b(
            {"grid": ["ceil_div(rows, 4)"], "block": [128]},
            {"x": t(["rows", "C"], "in"), "y": t(["rows", "C"], "out"), "rows": 9, "C": 100},
            [{"rows": 130, "C": 33}, {"rows": 2, "C": 300}],
        ),
        "softmax",
        lambda a, s: {"y": _softmax(a["x"])},
    ),
    (
        "online/down_pairs_broadcast",
        """
__global__ void k(const float* logit, float* prob, int N, int V) {
    int row = blockIdx.x, lane = threadIdx.x;
    float mx = -3.0e38f, den = 0.0f;
    for (int c = lane; c < V; c += 32) {
        float v = logit[row * V + c];
        float nm = fmaxf(mx, v);
        den = den * __expf(mx - nm) + __expf(v - nm);
        mx = nm;
    }
    for (int off = 16; off > 0; off /= 2) {
        float m2 = __shfl_down_sync(0xffffffff, mx, off);
        float d2 = __shfl_down_sync(0xffffffff, den, off);
        float nm = fmaxf(mx, m2);
        den = den * __expf(mx - nm) + d2 * __expf(m2 - nm);
        mx = nm;
    }
    mx = __shfl_sync(0xffffffff, mx, 0);
    den = __shfl_sync(0xffffffff, den, 0);
    for (int c = lane; c < V; c += 32) prob[row * V + c] = __expf(logit[row * V + c] - mx) / den;
}""",
        _b(
            {"grid": ["N"], "block": [32]},
            {"logit": t(["N", "V"], "in"), "prob": t(["N", "V"], "out"), "N": 7, "V": 70},
            [{"N": 129, "V": 5}, {"N": 1, "V": 257}],
        ),
        "softmax",
        lambda a, s: {"prob": _softmax(a["logit"])},
    ),
    (
        "online/causal_single_head",
        """
__global__ void k(const float* s, float* p, int T) {
    int q = blockIdx.x * 2 + threadIdx.x / 32, l = threadIdx.x & 31;
    if (q >= T) return;
    float m = -3.0e38f, z = 0.0f;
    for (int j = l; j <= q; j += 32) {
        float v = s[q * T + j];
        float nm = fmaxf(m, v);
        z = z * expf(m - nm) + expf(v - nm);
        m = nm;
    }
    for (int o = 16; o >= 1; o >>= 1) {
        float om = __shfl_xor_sync(0xffffffff, m, o), oz = __shfl_xor_sync(0xffffffff, z, o);
        float nm = fmaxf(m, om);
        z = z * expf(m - nm) + oz * expf(om - nm);
        m = nm;
    }
    for (int j = l; j < T; j += 32) p[q * T + j] = j <= q ? expf(s[q * T + j] - m) / z : 0.0f;
}""",
        _b(
            {"grid": ["ceil_div(T, 2)"], "block": [64]},
            {"s": t(["T", "T"], "in"), "p": t(["T", "T"], "out"), "T": 40},
            [{"T": 129}, {"T": 3}],
        ),
        "softmax",
        lambda a, s: {"p": _causal_softmax(a["s"])},
    ),
]
VARIANTS.extend(ONLINE_VARIANTS)

#: register-blocked outputs: a thread computes several results a constant stride apart (an
#: unrolled local array, or statements written out by hand); they join into one statement
INTERLEAVE_VARIANTS = [
    (
        "interleave/four_rows_per_thread_matmul",
        """
#define TM 4
__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * 32 + threadIdx.x;
    int row0 = (blockIdx.y * 8 + threadIdx.y) * TM;
    float acc[TM] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (col >= N) return;
    for (int k = 0; k < K; ++k) {
        float b = B[k * N + col];
        for (int r = 0; r < TM; ++r)
            if (row0 + r < M) acc[r] += A[(row0 + r) * K + k] * b;
    }
    for (int r = 0; r < TM; ++r)
        if (row0 + r < M) C[(row0 + r) * N + col] = acc[r];
}""",
        _b(
            {"grid": ["ceil_div(N, 32)", "ceil_div(M, 32)"], "block": [32, 8]},
            {
                "A": t(["M", "K"], "in"),
                "B": t(["K", "N"], "in"),
                "C": t(["M", "N"], "out"),
                "M": 40,
                "N": 50,
                "K": 30,
            },
            [{"M": 129, "N": 3, "K": 7}, {"M": 5, "N": 130, "K": 129}],
        ),
        "contract",
        lambda a, s: {"C": a["A"] @ a["B"]},
    ),
    (
        "interleave/hand_unrolled_quads",
        """
__global__ void k(const float* x, float* y, int quads) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < quads) {
        y[4 * i] = 2.0f * x[4 * i];
        y[4 * i + 1] = 2.0f * x[4 * i + 1];
        y[4 * i + 2] = 2.0f * x[4 * i + 2];
        y[4 * i + 3] = 2.0f * x[4 * i + 3];
    }
}""",
        _b(
            {"grid": ["ceil_div(quads, 64)"], "block": [64]},
            {"x": t(["4 * quads"], "in"), "y": t(["4 * quads"], "out"), "quads": 100},
            [{"quads": 33}, {"quads": 1}],
        ),
        "map",
        lambda a, s: {"y": 2 * a["x"]},
    ),
    (
        "interleave/two_columns_scaled",
        """
__global__ void k(const float* m, const float* s, float* o, int R, int Ch) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < R && c < Ch) {
        o[r * 2 * Ch + 2 * c + 1] = m[r * 2 * Ch + 2 * c + 1] * s[r];
        o[r * 2 * Ch + 2 * c] = m[r * 2 * Ch + 2 * c] * s[r];
    }
}""",
        _b(
            {"grid": ["ceil_div(Ch, 16)", "ceil_div(R, 8)"], "block": [16, 8]},
            {
                "m": t(["R", "2 * Ch"], "in"),
                "s": t(["R"], "in"),
                "o": t(["R", "2 * Ch"], "out"),
                "R": 20,
                "Ch": 30,
            },
            [{"R": 129, "Ch": 2}, {"R": 3, "Ch": 65}],
        ),
        "map",
        lambda a, s: {"o": a["m"] * a["s"][:, None]},
    ),
]
VARIANTS.extend(INTERLEAVE_VARIANTS)

#: permutations of more than two axes: transposed blocks of the source's last axis by the
#: target's last axis, the other axes loops around them
PERMUTE_VARIANTS = [
    (
        "permute/nhwc_to_nchw",
        """
__global__ void k(const float* in, float* out, int N, int H, int W, int C) {
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    int h = blockIdx.y;
    int nc = blockIdx.z;
    int n = nc / C, c = nc % C;
    if (w < W) out[((n * C + c) * H + h) * W + w] = in[((n * H + h) * W + w) * C + c];
}""",
        _b(
            {"grid": ["ceil_div(W, 32)", "H", "N * C"], "block": [32]},
            {
                "in": t(["N", "H", "W", "C"], "in"),
                "out": t(["N", "C", "H", "W"], "out"),
                "N": 2,
                "H": 3,
                "W": 40,
                "C": 5,
            },
            [{"N": 1, "H": 2, "W": 129, "C": 3}, {"N": 2, "H": 1, "W": 7, "C": 130}],
        ),
        "transpose",
        lambda a, s: {"out": a["in"].transpose(0, 3, 1, 2)},
    ),
    (
        "permute/batched_transpose_z",
        """
__global__ void k(const float* a, float* at, int B, int R, int Cc) {
    int c = blockIdx.x * 16 + threadIdx.x, r = blockIdx.y * 16 + threadIdx.y, b = blockIdx.z;
    if (r < R && c < Cc) at[(b * Cc + c) * R + r] = a[(b * R + r) * Cc + c];
}""",
        _b(
            {"grid": ["ceil_div(Cc, 16)", "ceil_div(R, 16)", "B"], "block": [16, 16]},
            {
                "a": t(["B", "R", "Cc"], "in"),
                "at": t(["B", "Cc", "R"], "out"),
                "B": 3,
                "R": 20,
                "Cc": 30,
            },
            [{"B": 2, "R": 129, "Cc": 5}, {"B": 1, "R": 3, "Cc": 200}],
        ),
        "transpose",
        lambda a, s: {"at": a["a"].transpose(0, 2, 1)},
    ),
    (
        "permute/chw_to_hwc",
        """
__global__ void k(const float* chw, float* hwc, int C, int H, int W) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= H * W) return;
    int y = i / W, x = i % W;
    for (int c = 0; c < C; ++c) hwc[(y * W + x) * C + c] = chw[(c * H + y) * W + x];
}""",
        _b(
            {"grid": ["ceil_div(H * W, 128)"], "block": [128]},
            {
                "chw": t(["C", "H", "W"], "in"),
                "hwc": t(["H", "W", "C"], "out"),
                "C": 3,
                "H": 10,
                "W": 20,
            },
            [{"C": 4, "H": 3, "W": 129}, {"C": 130, "H": 2, "W": 5}],
        ),
        "transpose",
        lambda a, s: {"hwc": a["chw"].transpose(1, 2, 0)},
    ),
]
VARIANTS.extend(PERMUTE_VARIANTS)

#: rotations of a vector by a runtime amount (C's remainder, its sign fixed up by hand, is the
#: floor remainder: a map whose index wraps): two shifted copies
ROTATE_VARIANTS = [
    (
        "rotate/left_by_k",
        """
__global__ void k(const float* a, float* b, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[(i + k) % n];
}""",
        _b(
            {"grid": ["ceil_div(n, 256)"], "block": [256]},
            {"a": t(["n"], "in"), "b": t(["n"], "out"), "n": 1000, "k": 7},
            [{"n": 129, "k": 128}, {"n": 5, "k": 12}],
        ),
        "map",
        lambda a, s: {"b": np.roll(a["a"], -s["k"])},
    ),
    (
        "rotate/fixup_with_if",
        """
__global__ void k(const float* src, float* dst, int len, int by) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= len) return;
    int j = (i - by) % len;
    if (j < 0) j += len;
    dst[i] = src[j];
}""",
        _b(
            {"grid": ["ceil_div(len, 128)"], "block": [128]},
            {"src": t(["len"], "in"), "dst": t(["len"], "out"), "len": 300, "by": -5},
            [{"len": 131, "by": 1000}, {"len": 2, "by": 1}],
        ),
        "map",
        lambda a, s: {"dst": np.roll(a["src"], s["by"])},
    ),
    (
        "rotate/ternary_right",
        """
__global__ void k(const float* x, float* y, int n, int shift) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        int r = (idx - shift) % n;
        y[idx] = x[r < 0 ? r + n : r];
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {"x": t(["n"], "in"), "y": t(["n"], "out"), "n": 500, "shift": 3},
            [{"n": 257, "shift": -1000}, {"n": 1, "shift": 5}],
        ),
        "map",
        lambda a, s: {"y": np.roll(a["x"], s["shift"])},
    ),
    (
        "rotate/double_remainder",
        """
__global__ void k(const float* v, float* w, int count, int s) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < count) w[g] = v[((g - s) % count + count) % count];
}""",
        _b(
            {"grid": ["ceil_div(count, 128)"], "block": [128]},
            {"v": t(["count"], "in"), "w": t(["count"], "out"), "count": 300, "s": -7},
            [{"count": 131, "s": 1000}, {"count": 3, "s": 2}],
        ),
        "map",
        lambda a, s: {"w": np.roll(a["v"], s["s"])},
    ),
]
VARIANTS.extend(ROTATE_VARIANTS)


#: C's truncating ``/`` and ``%`` of an index whose sign the analysis cannot prove (a thread
#: coordinate minus a runtime offset): integer data with C's semantics, not the floor division
#: the index analysis uses for non-negative values; and a split global index (``(i + off) / 4``)
#: whose block and thread parts stay apart.
def _trunc_div(a, b):
    return np.trunc(np.asarray(a, np.float64) / b).astype(np.int64)


CDIV_VARIANTS = [
    (
        "cdiv/offset_quotient_as_value",
        """
__global__ void k(float* out, const float* in, int n, int off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int q = (i - off) / 4;
        out[i] = in[i] + (float)q;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"out": t(["n"], "out"), "in": t(["n"], "in"), "n": 300, "off": 37},
            [{"n": 129, "off": 200}, {"n": 5, "off": 3}],
        ),
        "map",
        lambda a, s: {"out": a["in"] + _trunc_div(np.arange(s["n"]) - s["off"], 4)},
    ),
    (
        "cdiv/offset_remainder_as_value",
        """
__global__ void k(float* y, const float* x, int len, int base) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t >= len) return;
    int r = (t - base) % 8;
    y[t] = x[t] * (float)(r + 8);
}""",
        _b(
            {"grid": ["ceil_div(len, 64)"], "block": [64]},
            {"y": t(["len"], "out"), "x": t(["len"], "in"), "len": 300, "base": 37},
            [{"len": 129, "base": 1000}, {"len": 7, "base": 2}],
        ),
        "map",
        lambda a, s: {"y": a["x"] * (np.fmod(np.arange(s["len"]) - s["base"], 8) + 8)},
    ),
    (
        "cdiv/offset_quotient_as_address",
        """
__global__ void k(float* out, const float* in, int n, int off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[(i - off) / 4 + 10];
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"out": t(["n"], "out"), "in": t(["n"], "in"), "n": 300, "off": 37},
            [{"n": 129, "off": 41}, {"n": 40, "off": 1}],
        ),
        "gather",
        lambda a, s: {"out": a["in"][_trunc_div(np.arange(s["n"]) - s["off"], 4) + 10]},
    ),
    (
        "cdiv/split_global_index",
        """
__global__ void k(float* out, const float* in, int n, int off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + (float)((i + off) / 4);
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"out": t(["n"], "out"), "in": t(["n"], "in"), "n": 300, "off": 37},
            [{"n": 129, "off": 0}, {"n": 5, "off": 1000}],
        ),
        "map",
        lambda a, s: {"out": a["in"] + (np.arange(s["n"]) + s["off"]) // 4},
    ),
]
VARIANTS.extend(CDIV_VARIANTS)

#: integer data combined with an index or a constant keeps C's 32-bit wraparound (full-range
#: unsigned inputs): a comparison or a remainder of a sum that wrapped is not the unbounded one
_U32_FULL = {"range": [4294967000, 4294967295]}
WRAP_VARIANTS = [
    (
        "wrap/compare_after_add",
        """
__global__ void k(unsigned* dst, const unsigned* src, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) dst[j] = (src[j] + 5u > 3u) ? 1u : 2u;
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {
                "dst": t(["n"], "out", "uint32"),
                "src": t(["n"], "in", "uint32", **_U32_FULL),
                "n": 300,
            },
            [{"n": 129}, {"n": 2}],
        ),
        "map",
        lambda a, s: {"dst": np.where(a["src"] + np.uint32(5) > 3, 1, 2).astype(np.uint32)},
    ),
    (
        "wrap/remainder_of_sum",
        """
__global__ void k(const unsigned int* keys, unsigned int* buckets, unsigned int count) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += blockDim.x * gridDim.x)
        buckets[i] = (keys[i] + i) % 1000u;
}""",
        _b(
            {"grid": [8], "block": [64]},
            {
                "keys": t(["count"], "in", "uint32", **_U32_FULL),
                "buckets": t(["count"], "out", "uint32"),
                "count": 3000,
            },
            [{"count": 513}, {"count": 7}],
        ),
        "map",
        lambda a, s: {
            "buckets": (a["keys"] + np.arange(s["count"], dtype=np.uint32)) % np.uint32(1000)
        },
    ),
    (
        "wrap/scaled_difference",
        """
__global__ void k(int* out, const int* v, int n) {
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    if (g < n) out[g] = (v[g] * 3 - g) / 7;
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {
                "out": t(["n"], "out", "int32"),
                "v": t(["n"], "in", "int32", range=[-1000, 1000]),
                "n": 300,
            },
            [{"n": 65}, {"n": 3}],
        ),
        "map",
        lambda a, s: {
            "out": _trunc_div(a["v"].astype(np.int64) * 3 - np.arange(s["n"]), 7).astype(np.int32)
        },
    ),
]
VARIANTS.extend(WRAP_VARIANTS)

#: statements guarded by a flag or a mode that every thread tests alike (scalar parameters
#: alone): one branch of the port, taken when the kernel is traced
FLAG_VARIANTS = [
    (
        "flag/ternary_on_flag",
        """
__global__ void k(float* y, const float* x, int n, int apply) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = apply ? x[i] * 2.0f : x[i];
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"y": t(["n"], "out"), "x": t(["n"], "in"), "n": 300, "apply": 1},
            [{"n": 129, "apply": 0}, {"n": 5, "apply": 7}],
        ),
        "map",
        lambda a, s: {"y": a["x"] * 2.0 if s["apply"] else a["x"]},
    ),
    (
        "flag/early_return",
        """
__global__ void k(float* data, int count, int enabled) {
    if (!enabled) return;
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    if (g >= count) return;
    data[g] = tanhf(data[g]);
}""",
        _b(
            {"grid": ["ceil_div(count, 256)"], "block": [256]},
            {"data": t(["count"], "inout"), "count": 1000, "enabled": 1},
            [{"count": 257, "enabled": 0}, {"count": 3, "enabled": 1}],
        ),
        "map",
        lambda a, s: {"data": np.tanh(a["data"]) if s["enabled"] else a["data"]},
    ),
    (
        "flag/switch_with_stores",
        """
__global__ void k(const float* a, const float* b, float* z, int len, int op) {
    int t = blockDim.x * blockIdx.x + threadIdx.x;
    if (t < len) {
        switch (op) {
        case 0: z[t] = a[t] + b[t]; break;
        case 1: z[t] = a[t] - b[t]; break;
        default: z[t] = a[t] * b[t]; break;
        }
    }
}""",
        _b(
            {"grid": ["ceil_div(len, 64)"], "block": [64]},
            {
                "a": t(["len"], "in"),
                "b": t(["len"], "in"),
                "z": t(["len"], "out"),
                "len": 500,
                "op": 0,
            },
            [{"len": 129, "op": 1}, {"len": 7, "op": 5}],
        ),
        "map",
        lambda a, s: {"z": {0: a["a"] + a["b"], 1: a["a"] - a["b"]}.get(s["op"], a["a"] * a["b"])},
    ),
    (
        "flag/float_threshold_if_else",
        """
__global__ void k(float* out, const float* in, int m, float alpha) {
    int r = blockIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= m) return;
    if (alpha > 0.0f) out[r * m + c] = in[r * m + c] * alpha;
    else out[r * m + c] = -in[r * m + c];
}""",
        _b(
            {"grid": ["ceil_div(m, 128)", "rows"], "block": [128]},
            {
                "out": t(["rows", "m"], "out"),
                "in": t(["rows", "m"], "in"),
                "rows": 3,
                "m": 200,
                "alpha": 0.5,
            },
            [{"rows": 2, "m": 129, "alpha": -1.0}, {"rows": 5, "m": 3, "alpha": 2.0}],
        ),
        "map",
        lambda a, s: {"out": a["in"] * s["alpha"] if s["alpha"] > 0 else -a["in"]},
    ),
]
FLAG_VARIANTS.append(
    (
        "flag/switch_in_place_default_keeps",
        """
__global__ void k(float* buf, int n, int kind, float c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = buf[i];
        switch (kind) {
        case 3: v = v * c; break;
        case 7: v = fmaxf(v, c); break;
        default: break;
        }
        buf[i] = v;
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 128)"], "block": [128]},
            {"buf": t(["n"], "inout"), "n": 300, "kind": 3, "c": 0.25},
            [{"n": 129, "kind": 7}, {"n": 77, "kind": 0}, {"n": 5, "kind": 3}],
        ),
        "map",
        lambda a, s: {
            "buf": {3: a["buf"] * s["c"], 7: np.maximum(a["buf"], s["c"])}.get(s["kind"], a["buf"])
        },
    )
)
VARIANTS.extend(FLAG_VARIANTS)
