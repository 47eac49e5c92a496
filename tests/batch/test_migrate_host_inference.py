"""``migrate --check`` on a small tree written the way real host code is: a kernel file that
the main file includes after declaring the struct it takes by value, a vectorised reduction
whose tail re-declares its loop counter, a size passed in bytes, and a greeting that only
prints.  Every kernel gets a binding from the host code alone, no port crashes, and
``--examine`` puts each kernel in the bucket the real run does."""

from __future__ import annotations

import json
from pathlib import Path

from cuda2nki.batch.migrate import MigrateOptions, migrate

MAIN = """\
#include <cstdio>
typedef struct { int rows; int cols; float* cells; } Sheet;
#include "sheet_kernels.cu"

__global__ void hello() { printf("hello from %d\\n", threadIdx.x); }

int main() {
    Sheet s;
    s.rows = 40;
    s.cols = 24;
    cudaMalloc(&s.cells, s.rows * s.cols * sizeof(float));
    dim3 threads(8, 8);
    dim3 blocks((s.cols + 7) / 8, (s.rows + 7) / 8);
    offset_sheet<<<blocks, threads>>>(s, 0.25f);
    int *vals, *sum;
    int count = 3001;
    cudaMalloc(&vals, count * sizeof(int));
    cudaMalloc(&sum, sizeof(int));
    pair_total<<<min((count / 2 + 127) / 128, 64), 128>>>(vals, sum, count);
    hello<<<1, 4>>>();
    return 0;
}
"""

KERNELS = """\
__global__ void offset_sheet(Sheet s, float by) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < s.rows && c < s.cols) s.cells[r * s.cols + c] += by;
}

__global__ void pair_total(int* vals, int* sum, int count) {
    int acc = 0;
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = first; i < count / 2; i += blockDim.x * gridDim.x) {
        int2 two = reinterpret_cast<int2*>(vals)[i];
        acc += two.x + two.y;
    }
    int i = first + count / 2 * 2;
    if (i < count) acc += vals[i];
    atomicAdd(sum, acc);
}
"""

BYTES = """\
__global__ void negate(float* data, size_t nbytes) {
    size_t n = nbytes / sizeof(float);
    size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (k < n) data[k] = -data[k];
}
void run_negate(float* data, size_t nbytes) {
    negate<<<(nbytes / sizeof(float) + 255) / 256, 256>>>(data, nbytes);
}
int main() {
    float* d;
    size_t bytes = 5000 * sizeof(float);
    cudaMalloc(&d, bytes);
    run_negate(d, bytes);
}
"""

_CRASH_IDS = {"C2N4014", "C2N4018"}


def _report(out: Path) -> dict[str, dict]:
    data = json.loads((out / "report.json").read_text())
    return {r["kernel"]: r for r in data["kernels"] if r["kernel"]}


def test_real_host_code_binds_every_kernel(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.cu").write_text(MAIN)
    (src / "sheet_kernels.cu").write_text(KERNELS)
    (src / "bytes.cu").write_text(BYTES)
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True, timeout=600))
    got = _report(out)
    assert set(got) == {"offset_sheet", "pair_total", "hello", "negate"}
    for name, r in got.items():
        # the binding is never what is missing (porting may still stop at a construct)
        assert "C2N2502" not in {d["id"] for d in r["diagnostics"]}, (name, r)
        assert not r["missing"] and r["status"] != "failed", (name, r)
        if r["port"] is not None:
            assert r["binding"] == "inferred", (name, r)
            assert r.get("verdict") not in (None, "error"), (name, r)
            assert not _CRASH_IDS & set(r.get("check_ids", [])), (name, r)
    for name in ("offset_sheet", "negate"):
        assert got[name]["port"] is not None and got[name]["numerics"] == "pass", got[name]
    # a kernel that only prints is bound, then refused: it writes no global memory
    assert got["hello"]["port"] is None
    assert "C2N2301" in {d["id"] for d in got["hello"]["diagnostics"]}
    dry = tmp_path / "dry"
    migrate(MigrateOptions(src, dry, mode="examine"))
    assert {k: r["status"] for k, r in _report(dry).items()} == {
        k: r["status"] for k, r in got.items()
    }


TABLES = """\
#define TAPS 5
__constant__ float taps[TAPS];
static __constant__ int remap_lut[8];

__global__ void smooth(const float* in, float* out, int len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    out[i] = taps[i % TAPS] * in[i] + taps[0];
}

__global__ void relabel(const int* labels, int* out, int len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) out[i] = remap_lut[labels[i] & 7];
}

int main() {
    float h_taps[TAPS] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
    int h_lut[8] = {7, 6, 5, 4, 3, 2, 1, 0};
    int len = LEN;
    float *in, *out;
    int *labels, *mapped;
    cudaMalloc(&in, len * sizeof(float));
    cudaMalloc(&out, len * sizeof(float));
    cudaMalloc(&labels, len * sizeof(int));
    cudaMalloc(&mapped, len * sizeof(int));
    cudaMemcpyToSymbol(taps, h_taps, sizeof(h_taps));
    cudaMemcpyToSymbol(remap_lut, h_lut, sizeof(h_lut));
    smooth<<<(len + 127) / 128, 128>>>(in, out, len);
    relabel<<<(len + 255) / 256, 256>>>(labels, mapped, len);
    return 0;
}
"""


def test_host_filled_constant_tables_are_checked_inputs(tmp_path: Path) -> None:
    """Kernels reading ``__constant__`` tables the host fills are bound, ported with the table
    as an input tensor and checked (the size from -D), and --examine agrees."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "tables.cu").write_text(TABLES)
    out = tmp_path / "out"
    defines = {"LEN": "3000"}
    migrate(MigrateOptions(src, out, check=True, timeout=600, defines=defines))
    got = _report(out)
    assert set(got) == {"smooth", "relabel"}
    for name, r in got.items():
        assert r["port"] is not None and r["binding"] == "inferred", (name, r)
        assert r["numerics"] == "pass", (name, r)
    dry = tmp_path / "dry"
    migrate(MigrateOptions(src, dry, mode="examine", defines=defines))
    assert {k: r["status"] for k, r in _report(dry).items()} == {
        k: r["status"] for k, r in got.items()
    }
