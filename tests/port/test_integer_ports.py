"""32-bit integer kernels through the recognised path: hashes (xor, logical shifts, wrapping
multiplies, ``%`` by a constant), signed division and arithmetic shifts, comparisons and selects of
two full-range values, per-element unsigned divisors.  The engines compute in fp32, so these
are exact integer instructions (passes/_ints.py); each spelling is ported on both targets and
compared bit for bit with the SIMT interpreter on full-range inputs."""

from __future__ import annotations

import pytest

from tests.port.acceptance import grid_binding as _b
from tests.port.acceptance import port_variant
from tests.port.acceptance import tensor_param as _t

I32 = [-(2**31), 2**31 - 1]
U32 = [0, 2**32 - 1]


INT_VARIANTS = [
    (
        "int/hash_grid_stride_unsigned",
        """
__device__ unsigned int mixer(unsigned int v) {
    v = (v ^ 61u) ^ (v >> 16);
    v ^= v << 5;
    v = v ^ (v >> 4);
    v *= 0x9e3779b1u;
    v = v ^ (v >> 15);
    return v;
}
__global__ void k(const unsigned int* src, unsigned int* dst, unsigned int salt,
                  unsigned int count) {
    for (unsigned int j = blockIdx.x * blockDim.x + threadIdx.x; j < count;
         j += gridDim.x * blockDim.x) {
        dst[j] = mixer(src[j] ^ salt) % 65521u;
    }
}""",
        _b(
            [16],
            {
                "src": _t(["count"], "in", "uint32", U32),
                "dst": _t(["count"], "out", "uint32"),
                "salt": {"value": 4000000000, "dtype": "uint32"},
                "count": 3000,
            },
            [{"count": 257}, {"count": 1}],
        ),
    ),
    (
        "int/signed_guard_divmod_shift",
        """
__global__ void k(const int* a, const int* b, int* q, int* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int x = a[i] * b[i] - (b[i] ^ a[i]);
        q[i] = x / 13 + (x >> 3);
        r[i] = (x % 1000) ^ (b[i] & 0xff);
    }
}""",
        _b(
            ["ceil_div(n, 128)"],
            {
                "a": _t(["n"], "in", "int32", I32),
                "b": _t(["n"], "in", "int32", I32),
                "q": _t(["n"], "out", "int32"),
                "r": _t(["n"], "out", "int32"),
                "n": 1000,
            },
            [{"n": 129}, {"n": 5000}],
        ),
    ),
    (
        "int/for_stride_compare_select_minmax",
        """
__global__ void k(const int* lhs, const int* rhs, int* out, int len) {
    for (int e = threadIdx.x + blockIdx.x * blockDim.x; e < len; e += blockDim.x * gridDim.x) {
        int x = lhs[e], y = rhs[e];
        int hi = max(x, y);
        int lo = x < y ? x : y;
        out[e] = (hi - lo) + (x == y ? 1 : 0) + (x <= y ? 2 : 0);
    }
}""",
        _b(
            [8],
            {
                "lhs": _t(["len"], "in", "int32", I32),
                "rhs": _t(["len"], "in", "int32", I32),
                "out": _t(["len"], "out", "int32"),
                "len": 2000,
            },
            [{"len": 130}, {"len": 3}],
        ),
    ),
    (
        "int/unsigned_per_element_divisor",
        """
__global__ void k(const unsigned* num, const unsigned* den, unsigned* quo, int m) {
    int t = blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= m) return;
    unsigned d = den[t] | 1u;
    quo[t] = num[t] / d + num[t] % (d >> 2 | 1u);
}""",
        _b(
            ["ceil_div(m, 128)"],
            {
                "num": _t(["m"], "in", "uint32", U32),
                "den": _t(["m"], "in", "uint32", U32),
                "quo": _t(["m"], "out", "uint32"),
                "m": 500,
            },
            [{"m": 128}, {"m": 7}],
        ),
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), INT_VARIANTS, ids=[v[0] for v in INT_VARIANTS])
def test_integer_kernels_port_exactly(vid, src, bdict, target, tmp_path) -> None:
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=0.0)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert res.idiom == "map"
