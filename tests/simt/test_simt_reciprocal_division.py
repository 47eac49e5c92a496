"""The interpreter's floating division computed as a port computes it, ``x * (1 / y)``, inside
``reciprocal_division()`` (and IEEE division outside), with the divisions that met divisors out
of the reciprocal's normal range recorded by source line."""

from __future__ import annotations

import numpy as np

from cuda2nki.simt.recipdiv import Site, reciprocal_division
from tests.simt.simt_helpers import f32, run

QUOTIENT = """
__global__ void ratio(const float *num, const float *den, float *q, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) q[i] = num[i] / den[i];
}
"""

# compound assignment, grid-stride loop, a double divisor held in a local
COMPOUND = """
__global__ void shrink(float *x, const float *w, int len) {
  for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < len; k += gridDim.x * blockDim.x) {
    float s = w[k];
    x[k] /= s;
  }
}
"""

SUBNORMAL = 1e-40
NUM = f32(2e-3, 0.0, 3.0, -1e-3)
DEN = f32(SUBNORMAL, SUBNORMAL, 4.0, -SUBNORMAL)


def test_reciprocal_division_inside_the_context_only() -> None:
    plain = run(QUOTIENT, grid=(1,), block=(4,), num=NUM, den=DEN, q=np.zeros(4, np.float32), n=4)
    assert plain["q"][1] == 0.0 and np.isfinite(plain["q"]).all()  # IEEE: 0 / subnormal is 0
    with reciprocal_division() as divs:
        out = run(QUOTIENT, grid=(1,), block=(4,), num=NUM, den=DEN, q=np.zeros(4, np.float32), n=4)
    q = out["q"]
    assert np.isinf(q[0]) and np.isnan(q[1]) and q[2] == np.float32(0.75) and np.isinf(q[3])
    [site] = divs.met()
    assert site.loc.line == 4 and site.tiny == 3 and site.huge == 0


def test_compound_division_in_a_grid_stride_loop() -> None:
    x = f32(1.0, 5e-3, 0.0, 6.0, 7.0)
    w = f32(2.0, SUBNORMAL, SUBNORMAL, 3.0, 1e38)
    with reciprocal_division() as divs:
        out = run(COMPOUND, grid=(1,), block=(2,), x=x.copy(), w=w, len=5)
    got = out["x"]
    assert got[0] == 0.5 and np.isinf(got[1]) and np.isnan(got[2])
    [site] = divs.met()
    assert site.loc.line == 5 and (site.tiny, site.huge) == (2, 1)
    plain = run(COMPOUND, grid=(1,), block=(2,), x=x.copy(), w=w, len=5)["x"]
    assert np.isfinite(plain).all()


def test_site_counts_both_ends_of_the_range() -> None:
    from cuda2nki.diagnostics import SourceLoc

    s = Site(SourceLoc("k.cu", 1, 1))
    # zero and infinity divide alike either way; 0.5 and 1e30 have normal reciprocals
    s.note(f32(1e-39, 3e-39, 1e-37, 2e38, -3e38, np.inf, 0.0, 0.5, 1e30), np.dtype(np.float32))
    assert (s.tiny, s.huge) == (1, 2) and s.met
