"""Functional-style casts ``T(x)`` with ``T`` a one-word type name: ``unsigned``, ``signed``,
the glibc short names (``uint``, ``ushort``, ``uchar``, ``ulong``), typedefs and aliases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

# (cast of the int32 `v`, its value in NumPy)
CASTS = {
    "unsigned": ("unsigned(v)", lambda v: v.astype(np.uint32)),
    "signed": ("signed(v) + 1", lambda v: v + 1),
    "uint": ("uint(v) >> 1", lambda v: v.astype(np.uint32) >> 1),
    "ushort": ("ushort(v)", lambda v: v.astype(np.uint16)),
    "uchar": ("uchar(v)", lambda v: v.astype(np.uint8)),
    "ulong": ("ulong(v) >> 33", lambda v: v.astype(np.int64).astype(np.uint64) >> 33),
    "typedef": ("word_t(v)", lambda v: v.astype(np.uint16)),
    "alias": ("half_word(v)", lambda v: v.astype(np.int16)),
}


@pytest.mark.parametrize("spelling", sorted(CASTS))
def test_functional_cast(tmp_path: Path, spelling: str) -> None:
    expr, want = CASTS[spelling]
    path = tmp_path / "k.cu"
    path.write_text(
        f"""typedef unsigned short word_t;
using half_word = short;
__global__ void conv(const int* src, double* dst, int n) {{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{
        int v = src[i];
        dst[i] = double({expr});
    }}
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    v = np.array([0, 7, -1, 70000, -70000, 255, 256, 2**31 - 1, -(2**31)], np.int32)
    got = run_kernel(
        tu,
        "conv",
        grid=(2,),
        block=(2,),
        args={"src": v, "dst": np.zeros(v.size, np.float64), "n": v.size},
    )["dst"]
    np.testing.assert_array_equal(got, np.asarray(want(v)).astype(np.float64))


def test_a_variable_named_like_a_type_is_still_a_call(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """__device__ int uint(int x) { return x * 3; }
__global__ void k(int* out) { out[threadIdx.x] = uint(threadIdx.x); }
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(tu, "k", grid=(1,), block=(4,), args={"out": np.zeros(4, np.int32)})["out"]
    np.testing.assert_array_equal(got, np.arange(4) * 3)
