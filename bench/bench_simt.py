"""SIMT interpreter overhead: interpreter time / NumPy reference time for the same computation.

Targets (issue 2 §6): elementwise <= 5x NumPy; reductions and softmax <= 20x; tiled matmul 512^3
under 10 s.  Each case checks the interpreter's result against the reference before timing counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel

VECTOR_ADD = """
__global__ void vector_add(float* out, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"""

SOFTMAX = """
__global__ void softmax_rows(const float* x, float* y, int C) {
    __shared__ float red[256];
    int row = blockIdx.x, t = threadIdx.x;
    const float* xr = x + row * C;
    float m = -INFINITY;
    for (int j = t; j < C; j += blockDim.x) m = fmaxf(m, xr[j]);
    red[t] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int j = t; j < C; j += blockDim.x) sum += expf(xr[j] - m);
    red[t] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int j = t; j < C; j += blockDim.x) y[row * C + j] = expf(xr[j] - m) * inv;
}
"""

REDUCE = """
__global__ void reduce_shared_tree(const float* in, float* partial, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}
"""

MATMUL = """
#define TILE 16
__global__ void matmul_tiled(float* C, const float* A, const float* B, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        int a_col = t * TILE + tx, b_row = t * TILE + ty;
        As[ty][tx] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = sum;
}
"""


OUTS = ("out", "y", "partial", "C")  # the output parameter of each case


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _case(
    name: str,
    src: str,
    kernel: str,
    launch: dict,
    args: dict,
    ref: Callable[[], object],
    check: Callable[[dict, object], None],
    repeat: int = 3,
) -> tuple[str, float, float]:
    tu = parse_source(src, f"{kernel}.cu")
    outs = [
        k for k, v in args.items() if isinstance(v, np.ndarray) and v.flags.writeable and k in OUTS
    ]
    t_sim, got = _best(lambda: run_kernel(tu, kernel, args=args, outputs=outs, **launch), repeat)
    t_ref, want = _best(ref, repeat)
    check(got, want)
    return name, t_sim, t_ref


def cases() -> list[tuple[str, float, float]]:
    rng = np.random.default_rng(0)
    out = []

    n = 16 << 20
    a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out.append(
        _case(
            "vector add 16M",
            VECTOR_ADD,
            "vector_add",
            {"grid": ((n + 255) // 256,), "block": (256,)},
            {"out": np.empty(n, np.float32), "a": a, "b": b, "n": n},
            lambda: a + b,
            lambda g, w: np.testing.assert_array_equal(g["out"], w),
        )
    )

    r = c = 2048
    x = rng.standard_normal((r, c), dtype=np.float32)

    def softmax_ref():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    out.append(
        _case(
            "row softmax 2048x2048",
            SOFTMAX,
            "softmax_rows",
            {"grid": (r,), "block": (256,)},
            {"x": x, "y": np.empty((r, c), np.float32), "C": c},
            softmax_ref,
            lambda g, w: np.testing.assert_allclose(g["y"].reshape(r, c), w, rtol=1e-5, atol=1e-7),
        )
    )

    n = 16 << 20
    v = rng.standard_normal(n, dtype=np.float32)
    out.append(
        _case(
            "shared-memory reduction 16M",
            REDUCE,
            "reduce_shared_tree",
            {"grid": (n // 256,), "block": (256,), "shared_bytes": 1024},
            {"in": v, "partial": np.empty(n // 256, np.float32), "n": n},
            lambda: v.reshape(-1, 256).sum(axis=1),
            lambda g, w: np.testing.assert_allclose(g["partial"], w, rtol=1e-4, atol=1e-4),
        )
    )

    m = 512
    A, B = (
        rng.standard_normal((m, m), dtype=np.float32),
        rng.standard_normal((m, m), dtype=np.float32),
    )
    out.append(
        _case(
            "tiled matmul 512^3",
            MATMUL,
            "matmul_tiled",
            {"grid": (m // 16, m // 16), "block": (16, 16)},
            {"C": np.empty((m, m), np.float32), "A": A, "B": B, "M": m, "N": m, "K": m},
            lambda: A @ B,
            lambda g, w: np.testing.assert_allclose(g["C"], w, rtol=1e-3, atol=1e-3),
            repeat=1,
        )
    )
    return out


def main() -> None:
    targets = {
        "vector add 16M": "<= 5x",
        "row softmax 2048x2048": "<= 20x",
        "shared-memory reduction 16M": "<= 20x",
        "tiled matmul 512^3": "< 10 s",
    }
    print(f"{'case':32s} {'simt s':>9s} {'numpy s':>9s} {'ratio':>8s}  target")
    for name, t_sim, t_ref in cases():
        print(f"{name:32s} {t_sim:9.3f} {t_ref:9.4f} {t_sim / t_ref:7.1f}x  {targets[name]}")


if __name__ == "__main__":
    main()
