"""``auto`` return types are deduced from the returned value (frontend, then SIMT)."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from tests.simt.simt_helpers import run, tu_of

_SERIES = """\
__device__ auto term(size_t k) { return ((k & 1) ? 1 : -1) / (double)k; }
__global__ void fill(double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = term(i + 1);
}
"""

_LOCAL = """\
__device__ inline auto scaled(float v, int s) {
  auto r = v * s;
  return r;
}
__global__ void fill(float *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = scaled((float)i, 3);
}
"""

_BRANCHES = """\
__device__ auto clampi(int v, int hi) {
  if (v > hi) return hi;
  return v;
}
__device__ auto nothing(int *p) { p[0] = 0; }
__global__ void fill(int *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = clampi(i, 5);
}
"""

_TEMPLATE = """\
template <typename T>
__device__ auto half_of(T v) { return v / 2; }
__global__ void fill(float *out, int *iout, int n) {
  int i = threadIdx.x;
  if (i < n) { out[i] = half_of((float)i); iout[i] = half_of(i); }
}
"""


def _fn(tu: A.TranslationUnit, name: str) -> A.Function:
    return next(f for f in tu.functions if f.name.startswith(name))


@pytest.mark.parametrize(
    ("src", "fname", "ty"),
    [
        (_SERIES, "term", "float64"),
        (_LOCAL, "scaled", "float32"),
        (_BRANCHES, "clampi", "int32"),
    ],
)
def test_auto_return_type_is_the_returned_values(src: str, fname: str, ty: str) -> None:
    rt = _fn(tu_of(src), fname).return_type
    assert isinstance(rt, A.ScalarType) and rt.name == ty


def test_auto_without_a_return_value_is_void() -> None:
    rt = _fn(tu_of(_BRANCHES), "nothing").return_type
    assert rt == A.ScalarType(name="void")


def test_auto_double_series_runs_in_the_interpreter() -> None:
    out = run(_SERIES, "fill", grid=(1,), block=(8,), out=np.zeros(8), n=8)["out"]
    want = [(1 if (k & 1) else -1) / k for k in range(1, 9)]
    np.testing.assert_allclose(out, want)


def test_auto_local_and_template_returns_run() -> None:
    out = run(_LOCAL, "fill", block=(4,), out=np.zeros(4, np.float32), n=4)["out"]
    assert out.tolist() == [0.0, 3.0, 6.0, 9.0]
    got = run(
        _TEMPLATE,
        "fill",
        block=(4,),
        out=np.zeros(4, np.float32),
        iout=np.zeros(4, np.int32),
        n=4,
    )
    assert got["out"].tolist() == [0.0, 0.5, 1.0, 1.5]
    assert got["iout"].tolist() == [0, 0, 1, 1]
