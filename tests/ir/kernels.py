"""Intent kernels of the corpus idioms, in IR text (shared by the IR tests)."""

from cuda2nki.ir.parser import parse

VADD = """
kernel vadd(a: in float32[N], b: in float32[N], c: out float32[N], N: int32) @"vadd.cu":3:1 {
  @5:3 map: c[i] = a[i] + b[i] for i < N;
}
"""

SAXPY_GUARDED = """
kernel saxpy(x: in float32[N], y: inout float32[N], alpha: float32, N: int32) {
  map: y[i] = alpha * x[i] + y[i] for i < N where index(i) % 2 == 0;
}
"""

SOFTMAX = """
kernel softmax(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {
  temp m: float32[R];
  temp e: float32[R, C];
  temp s: float32[R];
  softmax: m[i] = reduce(max, j < C: x[i, j]) for i < R;
  softmax: e[i, j] = exp(x[i, j] - m[i]) for i < R, j < C;
  softmax: s[i] = reduce(add, j < C: e[i, j]) for i < R;
  softmax: y[i, j] = e[i, j] / s[i] for i < R, j < C;
}
"""

MATMUL = """
kernel matmul(A: in float32[M, K], B: in float32[K, N], C: out float32[M, N],
              M: int32, N: int32, K: int32) {
  contract: C[i, j] = reduce(add, k < K: A[i, k] * B[k, j]; acc float32) for i < M, j < N;
}
"""

MATMUL_BF16 = """
kernel matmul_bf16(A: in bfloat16[M, K], B: in bfloat16[K, N], C: out float32[M, N],
                   M: int32, N: int32, K: int32) {
  contract: C[i, j] = reduce(add, k < K: cast(A[i, k], float32) * cast(B[k, j], float32);
                             acc float32) for i < M, j < N;
}
"""

TRANSPOSE = """
kernel transpose(A: in float32[M, N], B: out float32[N, M], M: int32, N: int32) {
  transpose: B[j, i] = A[i, j] for i < M, j < N;
}
"""

LAYERNORM = """
kernel layernorm(x: in float32[R, C], g: in float32[C], b: in float32[C], y: out float32[R, C],
                 eps: float32, R: int32, C: int32) {
  temp mu: float32[R];
  temp var: float32[R];
  norm: mu[i] = reduce(add, j < C: x[i, j]) / cast(index(C), float32) for i < R;
  norm: var[i] = reduce(add, j < C: square(x[i, j] - mu[i])) / cast(index(C), float32) for i < R;
  norm: y[i, j] = (x[i, j] - mu[i]) * rsqrt(var[i] + eps) * g[j] + b[j] for i < R, j < C;
}
"""

RMSNORM = """
kernel rmsnorm(x: in float32[R, C], w: in float32[C], y: out float32[R, C], R: int32, C: int32) {
  temp ss: float32[R];
  norm: ss[i] = reduce(add, j < C: x[i, j] * x[i, j]) for i < R;
  norm: y[i, j] = x[i, j] * rsqrt(ss[i] / cast(index(C), float32) + 1e-06) * w[j] for i < R, j < C;
}
"""

COLSUM = """
kernel colsum(x: in float32[R, C], y: out float32[C], R: int32, C: int32) {
  reduce: y[j] = reduce(add, i < R: x[i, j]) for j < C;
}
"""

TOTAL = """
kernel total(x: in float32[N], out: out float32[1], N: int32) {
  reduce: out[0] = reduce(add, i < N: x[i]);
}
"""

GEMV = """
kernel gemv(A: in float32[M, K], x: in float32[K], y: out float32[M], M: int32, K: int32) {
  contract: y[i] = reduce(add, k < K: A[i, k] * x[k]; acc float32) for i < M;
}
"""

STENCIL = """
kernel stencil(x: in float32[N], y: out float32[N], N: int32) {
  stencil: y[i] = select(index(i) > 0 && index(i) < N - 1,
                         (x[i - 1] + x[i] + x[i + 1]) * 0.333333343, x[i]) for i < N;
}
"""

STENCIL_GUARD = """
kernel stencil2(x: in float32[N], y: out float32[N], N: int32) {
  stencil: y[i] = x[i - 1] - 2.0 * x[i] + x[i + 1] for i < N where index(i) >= 1 && index(i) < N - 1;
}
"""

SCAN = """
kernel cumsum(x: in float32[R, C], y: out float32[R, C], z: out float32[R, C], R: int32, C: int32) {
  scan: y[i, j] = scan(add, j: x[i, j]) for i < R, scan j < C;
  scan: z[i, j] = scan(max, j: x[i, j]; exclusive) for i < R, scan j < C;
}
"""

GATHER = """
kernel gather(table: in float32[V, D], idx: in int32[N], out: out float32[N, D],
              V: int32, D: int32, N: int32) {
  gather: out[n, d] = table[$(idx[n]), d] for n < N, d < D;
}
"""

HISTOGRAM = """
kernel histogram(x: in int32[N], hist: out int32[B], N: int32, B: int32) {
  scatter: hist[$(x[i] % B)] add= 1 for i < N;
}
"""

ATTENTION = """
kernel scores(Q: in float32[S, D], K: in float32[T, D], P: out float32[S, T],
              scale: float32, S: int32, T: int32, D: int32) {
  contract: P[s, t] = reduce(add, d < D: Q[s, d] * K[t, d]; acc float32) * scale for s < S, t < T;
}
"""

TRIANGULAR = """
kernel prefix_dot(x: in float32[N], y: out float32[N], N: int32) {
  reduce: y[i] = reduce(add, k < i + 1: x[k]) for i < N;
}
"""

ALL = {
    name: text for name, text in dict(globals()).items() if name.isupper() and isinstance(text, str)
}


def kernel(name: str):
    return parse(ALL[name])
