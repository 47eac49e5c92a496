"""Overflow of a narrow accumulator is not a defect of a port that sums in more precision.

A CUDA kernel that multiplies and sums ``half`` values overflows to infinity as soon as one
product or partial sum passes 65504; what follows (``inf - inf``, ``inf + x``) depends on the
order of its operations.  The port's matmul sums the same ``half`` inputs in fp32 PSUM (the
tensor engine has no fp16 accumulator) and stays finite.  The IR-derived tolerance is infinite
exactly where the kernel's narrow arithmetic may overflow (``|v| + e`` past the dtype's largest
value) and keeps judging every other element; the kernels below are checked on inputs whose
products overflow half."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cuda2nki
from cuda2nki.ir.evaluate import error_bound, evaluate
from cuda2nki.ir.parser import parse

#: half accumulations spelled three ways: ``+=`` on a ``half`` with the ``half`` operator ``*``,
#: ``__hadd``/``__hmul`` intrinsics, a grid-stride row loop summing ``__hmul`` products
SPELLINGS = {
    "plus_equals": (
        """#include <cuda_fp16.h>
__global__ void hgemm_plus(const half* x, const half* w, half* y, int rows, int depth, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols) return;
    half s = 0;
    for (int d = 0; d < depth; ++d) s += x[r * depth + d] * w[d * cols + c];
    y[r * cols + c] = s;
}
""",
        """kernel = "hgemm_plus"
[launch]
grid = ["ceil_div(cols, 16)", "ceil_div(rows, 16)"]
block = [16, 16]
[params]
x = { shape = ["rows", "depth"], dtype = "float16", role = "in", range = [-300.0, 300.0] }
w = { shape = ["depth", "cols"], dtype = "float16", role = "in", range = [-300.0, 300.0] }
y = { shape = ["rows", "cols"], dtype = "float16", role = "out" }
rows = 40
depth = 24
cols = 36
""",
    ),
    "hadd_hmul": (
        """#include <cuda_fp16.h>
__global__ void hgemm_hadd(const __half* p, const __half* q, __half* out, int n, int m, int len) {
    int i = threadIdx.y + blockIdx.y * blockDim.y;
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n && j < m) {
        __half acc = __float2half(0.0f);
        for (int t = 0; t < len; t++)
            acc = __hadd(acc, __hmul(p[i * len + t], q[t * m + j]));
        out[i * m + j] = acc;
    }
}
""",
        """kernel = "hgemm_hadd"
[launch]
grid = ["ceil_div(m, 8)", "ceil_div(n, 8)"]
block = [8, 8]
[params]
p = { shape = ["n", "len"], dtype = "float16", role = "in", range = [-250.0, 250.0] }
q = { shape = ["len", "m"], dtype = "float16", role = "in", range = [-250.0, 250.0] }
out = { shape = ["n", "m"], dtype = "float16", role = "out" }
n = 33
m = 20
len = 40
""",
    ),
    "grid_stride_rows": (
        """#include <cuda_fp16.h>
__global__ void hdot_rows(const half* v, const half* u, half* r, int nrow, int ncol) {
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < nrow;
         row += gridDim.x * blockDim.x) {
        half total = __float2half(0.f);
        for (int k = 0; k < ncol; ++k) total += __hmul(v[row * ncol + k], u[k]);
        r[row] = total;
    }
}
""",
        """kernel = "hdot_rows"
[launch]
grid = ["ceil_div(nrow, 128)"]
block = [128]
[params]
v = { shape = ["nrow", "ncol"], dtype = "float16", role = "in", range = [-300.0, 300.0] }
u = { shape = ["ncol"], dtype = "float16", role = "in", range = [-300.0, 300.0] }
r = { shape = ["nrow"], dtype = "float16", role = "out" }
nrow = 150
ncol = 48
""",
    ),
}


def _files(tmp_path: Path, name: str) -> tuple[Path, Path]:
    src, binding = SPELLINGS[name]
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    (tmp_path / f"{name}.toml").write_text(binding)
    res = cuda2nki.port(cu)
    assert res.source is not None, [str(d) for d in res.diagnostics]
    port = tmp_path / f"{name}_port.py"
    port.write_text(res.source)
    return cu, port


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_a_half_accumulating_kernel_checks_where_its_sums_overflow(tmp_path: Path, name) -> None:
    cu, port = _files(tmp_path, name)
    rep = cuda2nki.check(cu, port, seeds=2, extra_points=False)
    bad = [x for x in rep.numerics if x["classification"] != "expected"]
    assert rep.numerics_outcome == "pass", bad
    assert rep.numerics


HALF_MATMUL = """
kernel hmm(A: in float16[M, K], B: in float16[K, N], C: out float16[M, N],
           M: int32, N: int32, K: int32) {
  contract: C[i, j] = reduce(add, k < K: A[i, k] * B[k, j]; acc float16) for i < M, j < N;
}
"""

MIXED = """
kernel mixed(A: in float16[M, K], B: in float16[K, N], C: out float16[M, N],
             M: int32, N: int32, K: int32) {
  contract: C[i, j] = reduce(add, k < K: cast(A[i, k], float32) * cast(B[k, j], float32);
                             acc float32) for i < M, j < N;
}
"""


def _inputs(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((24, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    a[3, 5] = a[7, 0] = 3000.0  # 3000 x 100 = 3e5: past half's 65504 in rows 3 and 7
    b[5, :] = 100.0
    b[0, 2] = 100.0
    return {"A": a, "B": b}


def test_the_bound_is_infinite_exactly_where_half_arithmetic_may_overflow() -> None:
    ins = _inputs()
    k = parse(HALF_MATMUL)
    bound = error_bound(k, ins, c=2.0)["C"]
    mag = np.abs(ins["A"].astype(np.float64)) @ np.abs(ins["B"].astype(np.float64))
    assert np.all(np.isinf(bound) == (mag > 65504 * 0.99))
    assert np.isinf(bound[3]).all() and np.isinf(bound[7, 2]) and np.isfinite(bound[7, 3])
    # elsewhere the fp16 accumulation bound still judges: a wrong value there fails
    exact = evaluate(k, ins, mode="fp64")["C"]
    fp32_acc = (ins["A"].astype(np.float32) @ ins["B"].astype(np.float32)).astype(np.float16)
    with np.errstate(invalid="ignore"):
        diff = np.abs(fp32_acc.astype(np.float64) - exact)
    assert np.all((diff <= bound) | np.isinf(bound))
    off = exact + 0.5 * np.abs(exact) + 1.0
    assert not np.all((np.abs(off - exact) <= bound) | np.isinf(bound))


def test_a_kernel_summing_half_products_in_fp32_keeps_a_finite_bound() -> None:
    ins = _inputs()
    k = parse(MIXED)
    bound = error_bound(k, ins, c=2.0)["C"]
    exact = evaluate(k, ins, mode="fp64")["C"]
    # the fp32 sum stays in range; only outputs past 65504 overflow half on the store
    assert np.all(np.isinf(bound) == (np.abs(exact) > 65504 * 0.99))
    assert np.isfinite(bound[0]).all()
