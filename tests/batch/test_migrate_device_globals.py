"""``migrate --check`` on a file whose kernels share state through file-scope ``__device__`` and
``__managed__`` variables and take no parameters at all (sizes are macros, set with -D): every
kernel is bound from its declarations and launch sites, ported with the variables as tensors,
checked against the interpreter on the same memory, and ``--examine`` agrees."""

from __future__ import annotations

import json
from pathlib import Path

from cuda2nki.batch.migrate import MigrateOptions, migrate

SOLVER = """\
#ifndef SIDE
#define SIDE 64
#endif
#define CELLS (SIDE * SIDE)

__device__ float weight[CELLS];
__device__ float row_low[SIDE];
__device__ int row_mark[SIDE];
__device__ int col_mark[SIDE];
__managed__ int marked;

__global__ void clear_marks() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < SIDE) {
        row_mark[i] = 0;
        col_mark[i] = -1;
    }
    if (i == 0) marked = 0;
}

__global__ void lowest_in_rows() {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= SIDE) return;
    float low = weight[r * SIDE];
    for (int c = 1; c < SIDE; ++c) low = fminf(low, weight[r * SIDE + c]);
    row_low[r] = low;
}

__global__ void subtract_low() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int r = i / SIDE;
    weight[i] = weight[i] - row_low[r];
    if (weight[i] == 0.0f) {
        row_mark[r] = 1;
        atomicAdd(&marked, 1);
    }
}

int main() {
    clear_marks<<<(SIDE + 127) / 128, 128>>>();
    lowest_in_rows<<<(SIDE + 31) / 32, 32>>>();
    subtract_low<<<CELLS / 256, 256>>>();
    cudaDeviceSynchronize();
    return marked > 0 ? 0 : 1;
}
"""


def _report(out: Path) -> dict[str, dict]:
    data = json.loads((out / "report.json").read_text())
    return {r["kernel"]: r for r in data["kernels"] if r["kernel"]}


def test_kernels_sharing_device_memory_are_ported_and_checked(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "solver.cu").write_text(SOLVER)
    out = tmp_path / "out"
    defines = {"SIDE": "48"}
    migrate(MigrateOptions(src, out, check=True, timeout=600, defines=defines))
    got = _report(out)
    assert set(got) == {"clear_marks", "lowest_in_rows", "subtract_low"}
    for name, r in got.items():
        assert r["port"] is not None and r["binding"] == "inferred", (name, r)
        assert r["numerics"] == "pass", (name, r)
        assert "Global memory:" in (out / r["port"]).read_text(), name
    dry = tmp_path / "dry"
    migrate(MigrateOptions(src, dry, mode="examine", defines=defines))
    assert {k: r["status"] for k, r in _report(dry).items()} == {
        k: r["status"] for k, r in got.items()
    }
