"""Tiled GEMMs as a tutorial series writes them, bound from host code alone: pointers bumped per
K-tile, a 1-D block split into rows and columns, register tiles of results written back with
``alpha * acc[r] + beta * C[...]``, no bounds checks (the sizes are tile multiples).  Each binds
to ``A[M, K]``, ``B[K, N]``, ``C[M, N]`` with ``K`` kept a multiple of the K-tile, and lifts to a
single contraction."""

from __future__ import annotations

import pytest

from cuda2nki.api import lift
from cuda2nki.frontend import parse_source
from cuda2nki.lift import affine as af
from cuda2nki.lift.gaps import stride_gap
from cuda2nki.lift.infer import infer_binding
from cuda2nki.lift.tilebounds import loose_strides, scaled_key

#: one 32x32 tile per block of 1024 threads, pointers moved to the block's tile and bumped per
#: K-tile; the block's row comes from blockIdx.x
BUMPED_SMEM = """
#define TS {ts}
__global__ void {name}(int M, int N, int K, float alpha, const float *A, const float *B,
                       float beta, float *C) {{
  const unsigned int r0 = blockIdx.x, c0 = blockIdx.y;
  __shared__ float As[TS * TS];
  __shared__ float Bs[TS * TS];
  const unsigned int tc = threadIdx.x % TS;
  const unsigned int tr = threadIdx.x / TS;
  A += r0 * TS * K;
  B += c0 * TS;
  C += r0 * TS * N + c0 * TS;
  float acc = 0.0;
  for (int kb = 0; kb < K; kb += TS) {{
    As[tr * TS + tc] = A[tr * K + tc];
    Bs[tr * TS + tc] = B[tr * N + tc];
    __syncthreads();
    {bump}
    for (int d = 0; d < TS; ++d) acc += As[tr * TS + d] * Bs[d * TS + tc];
    __syncthreads();
  }}
  C[tr * N + tc] = alpha * acc + beta * C[tr * N + tc];
}}
void run(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {{
  dim3 grid((M + TS - 1) / TS, (N + TS - 1) / TS);
  dim3 block(TS * TS);
  {name}<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
}}
"""

#: a 1-D register tile: each thread accumulates TM rows of one column of C
ROWS_TILE = """
#define BM {bm}
#define BN {bn}
#define BK {bk}
#define TM {tm}
__global__ void rows_tile(int M, int N, int K, float alpha, const float *A, const float *B,
                          float beta, float *C) {{
  const {ity} by = blockIdx.y, bx = blockIdx.x;
  const int col = threadIdx.x % BN, row = threadIdx.x / BN;
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  A += by * BM * K;
  B += bx * BN;
  C += by * BM * N + bx * BN;
  const {ity} ac = threadIdx.x % BK, ar = threadIdx.x / BK;
  const {ity} bc = threadIdx.x % BN, br = threadIdx.x / BN;
  float res[TM] = {{0.0}};
  for ({ity} t = 0; t < K; t += BK) {{
    As[ar * BK + ac] = A[ar * K + ac];
    Bs[br * BN + bc] = B[br * N + bc];
    __syncthreads();
    A += BK;
    B += BK * N;
    for ({ity} d = 0; d < BK; ++d) {{
      float b = Bs[d * BN + col];
      for ({ity} r = 0; r < TM; ++r) res[r] += As[(row * TM + r) * BK + d] * b;
    }}
    __syncthreads();
  }}
  for ({ity} r = 0; r < TM; ++r)
    {store}
}}
void run(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {{
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  dim3 block((BM * BN) / TM);
  rows_tile<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
}}
"""

AB_STORE = "C[(row * TM + r) * N + col] = alpha * res[r] + beta * C[(row * TM + r) * N + col];"
PLAIN_STORE = "C[(row * TM + r) * N + col] = res[r];"

#: explicit indices, 2-D blocks, the K-tile guarded as `k0 + threadIdx.y < K`
GUARDED_2D = """
#define TS 16
__global__ void guarded(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float sa[TS][TS];
    __shared__ float sb[TS][TS];
    const int i = blockIdx.y * TS + threadIdx.y, j = blockIdx.x * TS + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TS) {
        sa[threadIdx.y][threadIdx.x] = (i < M && k0 + threadIdx.x < K) ? A[i * K + k0 + threadIdx.x] : 0.0f;
        if (j < N && k0 + threadIdx.y < K) sb[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + j];
        else sb[threadIdx.y][threadIdx.x] = 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TS; kk++) acc += sa[threadIdx.y][kk] * sb[kk][threadIdx.x];
        __syncthreads();
    }
    if (i < M && j < N) C[i * N + j] = acc;
}
void run(int M, int N, int K, const float* A, const float* B, float* C) {
    dim3 block(TS, TS);
    dim3 grid((N + TS - 1) / TS, (M + TS - 1) / TS);
    guarded<<<grid, block>>>(M, N, K, A, B, C);
}
"""


def _shapes(src: str, kernel: str) -> tuple[dict, dict]:
    partial, _ = infer_binding(parse_source(src, "g.cu"), kernel)
    p = partial["params"]
    return {n: p[n]["shape"] for n in ("A", "B", "C")}, partial.get("check", {})


def _one_contraction(src: str, kernel: str) -> None:
    got = lift(parse_source(src, "g.cu"), kernel)
    assert got.claimed and got.idiom == "contract", got.diagnostics
    assert len(got.intent.body) == 1, got.intent.body


MATRICES = {"A": ["M", "K"], "B": ["K", "N"], "C": ["M", "N"]}


@pytest.mark.parametrize(
    ("ts", "name", "bump"),
    [
        (32, "smem_block", "A += TS; B += TS * N;"),
        (16, "tile16", "B += N * TS; A += TS;"),
        (8, "tile8", "A = A + TS; B = B + TS * N;"),
    ],
)
def test_bumped_shared_tiles_bind_and_lift(ts: int, name: str, bump: str) -> None:
    src = BUMPED_SMEM.format(ts=ts, name=name, bump=bump)
    shapes, check = _shapes(src, name)
    assert shapes == MATRICES
    # no guard: the ceil-divided grid covers M and N in whole tiles only
    assert check.get("multiples") == {"M": ts, "N": ts, "K": ts}
    _one_contraction(src, name)


@pytest.mark.parametrize(
    ("bm", "bn", "bk", "tm", "ity"),
    [(64, 64, 8, 8, "unsigned int"), (32, 32, 8, 4, "int"), (64, 64, 4, 16, "uint")],
)
def test_register_row_tiles_bind_and_roll_back_into_one_contraction(
    bm: int, bn: int, bk: int, tm: int, ity: str
) -> None:
    src = ROWS_TILE.format(bm=bm, bn=bn, bk=bk, tm=tm, ity=ity, store=AB_STORE)
    shapes, check = _shapes(src, "rows_tile")
    assert shapes == MATRICES
    assert check.get("multiples") == {"M": bm, "N": bn, "K": bk}
    _one_contraction(src, "rows_tile")


def test_register_rows_stored_plainly_lift_too() -> None:
    _one_contraction(
        ROWS_TILE.format(bm=64, bn=64, bk=8, tm=8, ity="int", store=PLAIN_STORE), "rows_tile"
    )


def test_guards_on_the_k_tile_bound_the_scaled_row_index() -> None:
    shapes, check = _shapes(GUARDED_2D, "guarded")
    assert shapes == MATRICES
    assert "K" not in check.get("multiples", {})  # guarded: any K is fine


def test_scaled_key_and_loose_strides() -> None:
    k0, ty, j, n = af.sym("%k0"), af.sym("threadIdx.y"), af.sym("j"), af.sym("N")
    off = (k0 + ty) * n + j
    assert scaled_key(off, k0 + ty, lambda a: a == "N") == n
    assert scaled_key(off, k0 + j, lambda a: a == "N") is None
    strides = [af.ONE, n, n * 32]
    assert loose_strides(strides) == [af.ONE, n]


def test_a_stride_apart_is_another_element() -> None:
    r, c, n = af.sym("r"), af.sym("c"), af.sym("N")
    sizes = {"N", "M"}
    assert stride_gap(r * n + c, (r + 1) * n + c, sizes)
    assert not stride_gap(r * n + c, r * n + c + 1, sizes)  # a constant: decided elsewhere
    assert not stride_gap(r + c, r + c + af.sym("M"), sizes)  # M scales no index: an offset
