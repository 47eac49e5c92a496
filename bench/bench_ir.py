"""IR evaluator overhead: intent-evaluator time / plain NumPy time for the same math, and the
cost of the error-bound analysis, at large shapes (matmul 512^3, softmax 2048^2, layernorm).

Then the growth of the error-bound analysis with the row length of a softmax whose row max is
nested in the row sum's body, as the lifter writes it (C = 1,000 / 4,000 / 16,000): each
reduction is evaluated once per its free indices, so a 4x longer row costs about 4x, not 16x."""

from __future__ import annotations

import time

import numpy as np

from cuda2nki.ir.evaluate import analyse, error_bound, evaluate
from cuda2nki.ir.parser import parse

MATMUL = """
kernel matmul(A: in float32[M, K], B: in float32[K, N], C: out float32[M, N],
              M: int32, N: int32, K: int32) {
  contract: C[i, j] = reduce(add, k < K: A[i, k] * B[k, j]; acc float32) for i < M, j < N;
}"""
SOFTMAX = """
kernel softmax(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {
  temp m: float32[R];
  temp e: float32[R, C];
  temp s: float32[R];
  softmax: m[i] = reduce(max, j < C: x[i, j]) for i < R;
  softmax: e[i, j] = exp(x[i, j] - m[i]) for i < R, j < C;
  softmax: s[i] = reduce(add, j < C: e[i, j]) for i < R;
  softmax: y[i, j] = e[i, j] / s[i] for i < R, j < C;
}"""
#: one statement, the row max inside the row sum's body (the lifted form of a row softmax)
NESTED_SOFTMAX = """
kernel softmax(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {
  softmax: y[i, j] = exp(x[i, j] - reduce(max, k < C: x[i, k]; acc float32))
      / reduce(add, l < C: exp(x[i, l] - reduce(max, m < C: x[i, m]; acc float32)); acc float32)
      for i < R, j < C;
}"""
#: row lengths of the growth case; rows per length
GROWTH_COLS = (1_000, 4_000, 16_000)
GROWTH_ROWS = 256


def _best(fn, reps: int = 3) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _row(name: str, kernel_text: str, inputs: dict, numpy_fn) -> None:
    k = parse(kernel_text)
    t_np = _best(numpy_fn)
    t64 = _best(lambda: evaluate(k, inputs))
    t32 = _best(lambda: evaluate(k, inputs, mode="declared"))
    tan = _best(lambda: analyse(k, inputs), reps=1)
    print(
        f"{name:22s} numpy {t_np * 1e3:8.1f} ms | fp64 {t64 * 1e3:8.1f} ms ({t64 / t_np:5.1f}x)"
        f" | declared {t32 * 1e3:8.1f} ms ({t32 / t_np:5.1f}x) | bound {tan * 1e3:8.1f} ms"
    )


def main() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 512)).astype(np.float32)
    b = rng.standard_normal((512, 512)).astype(np.float32)
    _row("matmul 512^3", MATMUL, {"A": a, "B": b}, lambda: a.astype(np.float64) @ b)
    x = rng.standard_normal((2048, 2048)).astype(np.float32)

    def np_softmax():
        xd = x.astype(np.float64)
        e = np.exp(xd - xd.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    _row("softmax 2048^2", SOFTMAX, {"x": x}, np_softmax)
    nested_growth()


def nested_growth(rows: int = GROWTH_ROWS, cols: tuple[int, ...] = GROWTH_COLS) -> list[float]:
    """Error-bound time of the nested softmax per row length, and its growth ratios."""
    k = parse(NESTED_SOFTMAX)
    rng = np.random.default_rng(1)
    times = []
    for c in cols:
        x = rng.standard_normal((rows, c)).astype(np.float32)
        t = _best(lambda x=x: error_bound(k, {"x": x}))
        times.append(t)
        print(f"nested softmax bound {rows}x{c:<6d} {t * 1e3:8.1f} ms")
    growth = [
        f"C {a:,} -> {b:,}: {tb / ta:4.1f}x (linear {b / a:.0f}x, quadratic {(b / a) ** 2:.0f}x)"
        for a, b, ta, tb in zip(cols, cols[1:], times, times[1:])
    ]
    print("error-bound growth with the row length: " + "; ".join(growth))
    return times


if __name__ == "__main__":
    main()
