"""A launcher that picks its tile size in a branch (``if (n >= 4096) { const int TILE = 256;
... k<TILE><<<grid, TILE>>>(...); } else { const int TILE = 64; ... }``): migrate ports and
checks the kernel instantiated with the constants of the launch it binds, so the instance and
its launch agree."""

from __future__ import annotations

import json
from pathlib import Path

from cuda2nki.batch.migrate import MigrateOptions, migrate

SOURCE = """\
template <int TILE>
__global__ void scale_tiles(const float* x, float* y, int n, float f)
{
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n) y[i] = f * x[i];
}

void scale(const float* x, float* y, int n)
{
    if (n >= 4096) {
        const int TILE = 256;
        dim3 block(TILE);
        dim3 grid((n + TILE - 1) / TILE);
        scale_tiles<TILE><<<grid, block>>>(x, y, n, 0.5f);
    } else {
        const int TILE = 64;
        dim3 block(TILE);
        dim3 grid((n + TILE - 1) / TILE);
        scale_tiles<TILE><<<grid, block>>>(x, y, n, 0.5f);
    }
}

int main()
{
    float *x, *y;
    int n = 5000;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    scale(x, y, n);
    return 0;
}
"""


def test_branch_constants_instantiate_the_launched_kernel(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "tiles.cu").write_text(SOURCE)
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True, timeout=600))
    recs = json.loads((out / "report.json").read_text())["kernels"]
    assert recs and all(r["status"] == "automatic" for r in recs), recs
    assert all(r["verdict"] == "pass" for r in recs), recs
