"""Size macros (``#define N 4096``): found by their uses, and checked at smaller values that
win over the file's own definitions (cuda2nki.frontend.sizemacros, cuda2nki.batch.checksizes)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.frontend.preprocess import preprocess
from cuda2nki.frontend.sizemacros import (
    check_values,
    defines_win,
    effective_values,
    size_macros,
)

# a matrix-vector kernel; {defs} holds the size macros' definitions in one spelling or another
MV = """\
{defs}
#define BLOCK 64
#define SCALE 0.5f
__global__ void rows(const float* A, const float* x, float* y)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < NROWS) {{
        float s = 0.0f;
        for (int k = 0; k < NCOLS; k++) s += A[i * NCOLS + k] * x[k];
        y[i] = SCALE * s;
    }}
}}
int main()
{{
    float *A, *x, *y;
    cudaMalloc((void**)&A, sizeof(float) * NROWS * NCOLS);
    cudaMalloc((void**)&x, sizeof(float) * NCOLS);
    cudaMalloc((void**)&y, sizeof(float) * NROWS);
    dim3 block(BLOCK);
    dim3 grid((NROWS + BLOCK - 1) / BLOCK);
    rows<<<grid, block>>>(A, x, y);
    return 0;
}}
"""

SPELLINGS = {
    "plain": "#define NROWS 4096\n#define NCOLS 2048",
    "ifndef": "#ifndef NROWS\n# define NROWS 4096\n#endif\n#ifndef NCOLS\n#  define NCOLS 2048\n#endif",
    "if-defined": "#if !defined(NROWS) && !defined(NCOLS)\n#define NROWS 4096\n#define NCOLS (1 << 11)\n#endif",
    "expression": "#define NROWS (4 * 1024)\n#define NCOLS 2048u",
}


def _write(tmp_path: Path, defs: str, header: bool = False) -> Path:
    src = tmp_path / "mv.cu"
    if header:
        (tmp_path / "sizes.h").write_text(defs + "\n")
        defs = '#include "sizes.h"'
    src.write_text(MV.format(defs=defs))
    return src


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("header", [False, True])
def test_sizes_found_by_use_in_every_spelling(tmp_path: Path, spelling: str, header: bool) -> None:
    src = _write(tmp_path, SPELLINGS[spelling], header)
    found = size_macros(str(src), src.read_text())
    # BLOCK is the launch's block shape and SCALE a float: both keep their values
    assert [m.name for m in found] == ["NCOLS", "NROWS"]
    small = check_values(found, str(src), src.read_text())
    assert small == {"NCOLS": "131", "NROWS": "141"}


def test_user_define_keeps_its_value(tmp_path: Path) -> None:
    src = _write(tmp_path, SPELLINGS["ifndef"])
    found = size_macros(str(src), src.read_text(), defines={"NROWS": "100"})
    assert [m.name for m in found] == ["NCOLS"]


def test_tiles_and_constants_are_not_sizes(tmp_path: Path) -> None:
    src = tmp_path / "t.cu"
    src.write_text(
        "#define N 4096\n#define TILE 32\n#define ITERS 3\n#define NN (N * N)\n"
        "__global__ void t(float* a) {\n"
        "  __shared__ float s[TILE][TILE];\n"
        "  int i = blockIdx.x * TILE + threadIdx.x;\n"
        "  if (i < NN) a[i] = s[threadIdx.x][0];\n}\n"
        "int main() { float* a; a = (float*)malloc(NN * sizeof(float)); t<<<NN / 256, 256>>>(a); }\n"
    )
    found = size_macros(str(src), src.read_text())
    # N counts through NN; TILE shapes shared memory; ITERS is never used as a size
    assert [m.name for m in found] == ["N"]


def test_volume_sizes_are_smaller(tmp_path: Path) -> None:
    src = tmp_path / "v.cu"
    src.write_text(
        "#define NX 512\n#define NY 512\n#define NZ 512\n"
        "__global__ void v(float* a) { int i = threadIdx.x; if (i < NX) a[i * NY * NZ] = 1.f; }\n"
        "int main() { float* a; cudaMalloc(&a, NX * NY * NZ * sizeof(float)); }\n"
    )
    found = size_macros(str(src), src.read_text())
    small = check_values(found, str(src), src.read_text())
    assert small == {"NX": "37", "NY": "41", "NZ": "45"}


def test_small_sizes_are_left_alone(tmp_path: Path) -> None:
    src = _write(tmp_path, "#define NROWS 100\n#define NCOLS 2048")
    found = size_macros(str(src), src.read_text())
    assert check_values(found, str(src), src.read_text()) == {"NCOLS": "131"}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("header", [False, True])
def test_chosen_values_win_over_the_source(tmp_path: Path, spelling: str, header: bool) -> None:
    src = _write(tmp_path, SPELLINGS[spelling], header)
    text, small = src.read_text(), {"NROWS": "141", "NCOLS": "131"}
    assert effective_values(["NROWS", "NCOLS"], str(src), text) == {"NROWS": 4096, "NCOLS": 2048}
    with defines_win(small):
        got = effective_values(["NROWS", "NCOLS"], str(src), text, defines=small)
        pre = preprocess(text, str(src), small)
    assert got == {"NROWS": 141, "NCOLS": 131}
    assert "4096" not in pre.text


TWO = """\
#ifndef N
#define N 8192
#endif
#define M 6000
__global__ void scale(float* a, float f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) a[i] = f * a[i];
}
__global__ void colsum(const float* b, float* s)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < M) {
        float t = 0.0f;
        for (int i = 0; i < N; i++) t += b[i * M + j];
        s[j] = t;
    }
}
int main()
{
    float *a, *b, *s;
    cudaMalloc(&a, N * sizeof(float));
    cudaMalloc(&b, N * M * sizeof(float));
    cudaMalloc(&s, M * sizeof(float));
    scale<<<(N + 255) / 256, 256>>>(a, 2.0f);
    colsum<<<(M + 127) / 128, 128>>>(b, s);
    return 0;
}
"""


def test_migrate_checks_macro_sized_kernels_at_smaller_sizes(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "two.cu").write_text(TWO)
    out = tmp_path / "out"
    t0 = time.perf_counter()
    migrate(MigrateOptions(src, out, check=True, timeout=600))
    took = time.perf_counter() - t0
    recs = {r["kernel"]: r for r in json.loads((out / "report.json").read_text())["kernels"]}
    for name in ("scale", "colsum"):
        assert recs[name]["verdict"] == "pass", recs[name]
        notes = [d["message"] for d in recs[name]["diagnostics"] if d["id"] == "C2N4032"]
        assert notes and "-D N=" in notes[0] and "N = 8192" in notes[0]
    assert "-D M=" in notes[0]
    # the port written keeps the source's sizes
    assert "6000" in (out / recs["colsum"]["port"]).read_text()
    assert took < 300


def test_literal_ports_get_sizes_under_one_tile(tmp_path: Path) -> None:
    # a literal (thread-by-thread) port simulates every CUDA block: its check sizes stay small
    src = _write(tmp_path, SPELLINGS["plain"])
    found = size_macros(str(src), src.read_text())
    small = check_values(found, str(src), src.read_text(), small=True)
    assert small == {"NCOLS": "37", "NROWS": "41"}
