"""``constexpr`` functions without ``__device__`` are callable from device code (nvcc
``--expt-relaxed-constexpr``, as real code relies on)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

HELPERS = {
    "no_args": "constexpr int per_thread() { return 2; }\n"
    "constexpr int per_block() { return per_thread() * 4; }",
    "static_inline": "static constexpr int per_thread() { return 2; }\n"
    "inline constexpr int per_block() { return 8; }",
    "with_args": "constexpr int times(int a, int b) { return a * b; }\n"
    "constexpr int per_thread() { return times(1, 2); }\n"
    "constexpr int per_block() { return times(per_thread(), 4); }",
}


@pytest.mark.parametrize("spelling", sorted(HELPERS))
def test_constexpr_helpers_in_a_kernel(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""{HELPERS[spelling]}
__global__ void fill(float* out, int n) {{
    int base = blockIdx.x * per_block() + threadIdx.x * per_thread();
    for (int k = 0; k < per_thread(); k++)
        if (base + k < n) out[base + k] = (float)(base + k) / per_block();
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(
        tu, "fill", grid=(3,), block=(4,), args={"out": np.zeros(20, np.float32), "n": 20}
    )["out"]
    np.testing.assert_allclose(got, np.arange(20, dtype=np.float32) / 8, rtol=1e-6)
