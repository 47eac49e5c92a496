"""``alignof(T)`` in device code: the C alignment, a constant (as nvcc computes it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel


@pytest.mark.parametrize(
    "spelling,want",
    [
        ("alignof(float4)", 16),
        ("alignof(int)", 4),
        ("alignof(Mixed)", 8),
        ("alignof(float3)", 4),
        ("alignof(double2)", 16),
        ("alignof(const char*)", 8),
        ("alignof(short[3])", 2),
        ("alignof(T)", 8),
        ("sizeof(float4) / alignof(float4)", 1),
    ],
)
def test_alignof(tmp_path: Path, spelling: str, want: int) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""struct Mixed {{ char c; double d; }};
template <typename T>
__global__ void align_k(unsigned long* out) {{ out[threadIdx.x] = {spelling}; }}
int main() {{ unsigned long* o; align_k<double><<<1, 2>>>(o); return 0; }}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(
        tu, tu.kernels[0].name, grid=(1,), block=(2,), args={"out": np.zeros(2, np.uint64)}
    )["out"]
    np.testing.assert_array_equal(got, [want, want])


def test_alignof_in_an_alignas_of_shared_memory(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """__global__ void stage(const float* in, float* out) {
    __shared__ alignas(alignof(float4)) float tile[64];
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[63 - threadIdx.x] * (float)alignof(float4);
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.arange(64, dtype=np.float32)
    got = run_kernel(
        tu, "stage", grid=(1,), block=(64,), args={"in": x, "out": np.zeros(64, np.float32)}
    )["out"]
    np.testing.assert_array_equal(got, x[::-1] * 16)
