"""DirectXMath's storage types in CUDA–Direct3D interop kernels: vectors of x, y, z, w laid out
as DirectXMath lays them out (``XMFLOAT4`` aligned to 4 bytes, the ``A`` variants to 16)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

KERNEL = """#include <DirectXMath.h>
using namespace DirectX;
struct Vertex {{ {pos} position; {col} color; }};
__global__ void k(Vertex* v, unsigned n, int* size) {{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) size[0] = sizeof(Vertex);
    if (i < n) {{
        v[i].position.x = i;
        v[i].position.y = 2.0f * i;
        v[i].position.z = -1.0f;
        v[i].color.x = 1.0f;
        v[i].color.w = 0.5f;
    }}
}}
"""


@pytest.mark.parametrize(
    "pos, col, size",
    [
        ("XMFLOAT3", "XMFLOAT4", 28),
        ("DirectX::XMFLOAT3", "DirectX::XMFLOAT4", 28),
        ("XMFLOAT3A", "XMFLOAT4A", 32),
    ],
)
def test_vertex_struct_layout_and_writes(tmp_path: Path, pos: str, col: str, size: int) -> None:
    path = tmp_path / "k.cu"
    path.write_text(KERNEL.format(pos=pos, col=col))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    n = 10
    words = size // 4
    got = run_kernel(
        tu,
        "k",
        grid=(1,),
        block=(16,),
        args={"v": np.zeros(n * words, np.float32), "n": n, "size": np.zeros(1, np.int32)},
    )
    assert got["size"][0] == size
    v = got["v"].reshape(n, words)
    col_at = 4 if size == 32 else 3
    np.testing.assert_array_equal(v[:, 0], np.arange(n))
    np.testing.assert_array_equal(v[:, 1], 2 * np.arange(n))
    np.testing.assert_array_equal(v[:, 2], -1)
    np.testing.assert_array_equal(v[:, col_at], 1)
    np.testing.assert_array_equal(v[:, col_at + 3], 0.5)
