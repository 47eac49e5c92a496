"""Half-precision fused multiply-add rounds once: ``__hfma(a, b, c)`` is ``a * b + c`` computed
exactly and rounded to half, not rounded to fp32 first (a value just off a half tie would land
on it and round to even the wrong way)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.simt.simt_helpers import run

SRC = """
#include <cuda_fp16.h>
__global__ void k(const half* a, const half* b, const half* c, half* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = %s;
}
"""

#: (a, b, c): a * b is a half tie and c a nudge below the fp32 spacing there
TIES = [
    (1.125, 1.8671875, -(2.0**-23)),
    (2.78125, -0.96875, 2.0**-24),
    (-1.390625, -1.40625, 2.0**-24),
]


@pytest.mark.parametrize("call", ["__hfma(a[i], b[i], c[i])", "__hfma_relu(a[i], b[i], c[i])"])
def test_half_fma_rounds_once(call: str) -> None:
    a, b, c = (np.array(v, np.float16) for v in zip(*TIES))
    n = len(TIES)
    out = run(SRC % call, grid=(1,), block=(32,), a=a, b=b, c=c, out=np.zeros(n, np.float16), n=n)
    exact = a.astype(np.float64) * b + c
    if "relu" in call:
        exact = np.maximum(exact, 0)
    want = exact.astype(np.float16)  # one rounding
    twice = exact.astype(np.float32).astype(np.float16)
    assert (want != twice).any()  # the cases do tell the two apart
    np.testing.assert_array_equal(np.asarray(out["out"]), want)
