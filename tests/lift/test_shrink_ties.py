"""Sizes the host makes equal shrink together to a test size: the choice keeps them equal (a
kernel may rely on it) and does not depend on the process's hash seed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SOURCES = {
    "row_stride_ny": """
__global__ void add2d(const float* a, const float* b, float* c, int nx, int ny) {
    int ix = threadIdx.x + blockDim.x * blockIdx.x;
    int iy = threadIdx.y + blockDim.y * blockIdx.y;
    int idx = ix + iy * ny;
    if (ix < nx && iy < ny) c[idx] = a[idx] + b[idx];
}
int main() {
    int nx = 1 << 12, ny = 1 << 12;
    float *a, *b, *c;
    dim3 block(32, 32);
    dim3 grid((nx - 1) / block.x + 1, (ny - 1) / block.y + 1);
    add2d<<<grid, block>>>(a, b, c, nx, ny);
    return 0;
}
""",
    "three_equal": """
#define W 8192
__global__ void scale3(const float* p, float* q, int rows, int cols, int pitch) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < cols && y < rows) q[y * pitch + x] = 2.0f * p[y * pitch + x];
}
void run(const float* p, float* q) {
    scale3<<<dim3(W / 128, W), 128>>>(p, q, W, W, W);
}
""",
}


def _chosen(cu: Path, seed: int) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "cuda2nki", "bind", str(cu)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    ).stdout
    got = {}
    for line in out.splitlines():
        name, eq, value = line.partition(" = ")
        if eq and name.isidentifier() and value.strip().isdigit():
            got[name] = value.strip()
    return got


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_equal_host_sizes_shrink_together_whatever_the_hash_seed(name: str, tmp_path: Path):
    cu = tmp_path / f"{name}.cu"
    cu.write_text(SOURCES[name])
    runs = [_chosen(cu, seed) for seed in (0, 1, 2, 3)]
    assert runs[0] and all(r == runs[0] for r in runs), runs
    sizes = [v for k, v in runs[0].items() if k in ("nx", "ny", "rows", "cols", "pitch")]
    assert len(sizes) >= 2 and len(set(sizes)) == 1, runs[0]
    assert int(sizes[0]) < 4096, runs[0]
