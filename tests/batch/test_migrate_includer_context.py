"""``migrate`` reads a kernel header in its includer's context: through a conditional include
(the build's ``-DUSE_GPU``), and a kernel refused for a device function of another file stays
counted in its own file."""

from __future__ import annotations

import json
from pathlib import Path

from cuda2nki.batch.migrate import MigrateOptions, migrate

KERNELS = """\
#pragma once
__global__ void shift_rows(const real_t* in, real_t* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + (real_t)ROW_SHIFT;
}
"""

GPU = """\
#pragma once
#include "settings.h"
#include "kernels/shift.cuh"
inline void run_gpu(const real_t* a, real_t* b, int n) {
    shift_rows<<<(n + THREADS - 1) / THREADS, THREADS>>>(a, b, n);
}
"""

MAIN = """\
#include <cstdio>
#include "types.h"
#if defined(USE_GPU)
#include "gpu.cuh"
#else
#include "cpu.h"
#endif
int main() {
    int n = 3000;
    real_t *a, *b;
    cudaMalloc(&a, n * sizeof(real_t));
    cudaMalloc(&b, n * sizeof(real_t));
#ifdef USE_GPU
    run_gpu(a, b, n);
#endif
    return 0;
}
"""


def _tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "kernels").mkdir(parents=True)
    (src / "kernels" / "shift.cuh").write_text(KERNELS)
    (src / "gpu.cuh").write_text(GPU)
    (src / "settings.h").write_text("#define ROW_SHIFT 5\n#define THREADS 128\n")
    (src / "types.h").write_text("typedef float real_t;\n")
    (src / "cpu.h").write_text("void run_cpu(const float* a, float* b, int n);\n")
    (src / "main.cu").write_text(MAIN)
    return src


def _records(out: Path) -> dict[str, dict]:
    return {r["kernel"]: r for r in json.loads((out / "report.json").read_text())["kernels"]}


def test_a_header_reached_under_a_build_macro_is_ported_and_checked(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    examined = tmp_path / "examined"
    migrate(MigrateOptions(src, examined, mode="examine"))
    checked = tmp_path / "checked"
    migrate(MigrateOptions(src, checked, check=True, timeout=600))
    seen, ran = _records(examined)["shift_rows"], _records(checked)["shift_rows"]
    assert ran["status"] in ("automatic", "literal"), ran
    assert seen["status"] == ran["status"]
    assert ran["verdict"] == "pass", ran
    assert "C2N1008" in [d["id"] for d in ran["diagnostics"]]


HELPERS = """\
#pragma once
__device__ float settle(float v) {
    int k = 0;
again:
    if (v > 1.0f && k++ < 3) { v *= 0.5f; goto again; }
    return v;
}
"""

WORK = """\
__global__ void settle_all(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = settle(v[i]) * GAIN;
}
"""


def test_a_kernel_refused_for_another_files_code_stays_in_its_file(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "ops" / "detail").mkdir(parents=True)
    (src / "ops" / "detail" / "work.cu").write_text(WORK)
    (src / "helpers.cuh").write_text(HELPERS)
    (src / "api.h").write_text(
        '#pragma once\n#define GAIN 2.0f\n#include "helpers.cuh"\n#include "ops/detail/work.cu"\n'
    )
    (src / "main.cu").write_text(
        '#include "api.h"\nint main() { float* v; settle_all<<<4, 64>>>(v, 256); return 0; }\n'
    )
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, mode="examine"))
    rec = _records(out)["settle_all"]
    assert rec["file"] == "ops/detail/work.cu" and rec["status"] == "refused"
    assert rec["blocking"] == ["C2N1011"], rec
