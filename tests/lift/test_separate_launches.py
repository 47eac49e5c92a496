"""Kernels compiled apart from their launches: a kernel defined in one source file and launched
from another that sees only its declaration takes that launch (its grid, block and arguments);
a file that defines its own kernel of the same name gives none."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: a 2-D kernel with shared memory: no default launch would do
TILE = """
#define T 16
__global__ void tile_sum(float* out, const float* in, int rows, int cols) {
    __shared__ float s[T][T];
    int c = blockIdx.x * T + threadIdx.x;
    int r = blockIdx.y * T + threadIdx.y;
    s[threadIdx.y][threadIdx.x] = (r < rows && c < cols) ? in[r * cols + c] : 0.0f;
    __syncthreads();
    if (r < rows && c < cols) out[r * cols + c] = s[threadIdx.y][threadIdx.x] * 2.0f;
}
"""

DECL = "__global__ void tile_sum(float* out, const float* in, int rows, int cols);\n"

#: name -> {relative path: text}; the kernel is always in kern/tile.cu or tile.cu
TREES = {
    "header-declaration": {
        "tile.cu": TILE,
        "tile.cuh": "#pragma once\n" + DECL,
        "main.cu": """#include "tile.cuh"
int main() {
    int rows = 300, cols = 200;
    float *o, *i;
    dim3 b(16, 16);
    dim3 g((cols + 15) / 16, (rows + 15) / 16);
    tile_sum<<<g, b>>>(o, i, rows, cols);
}""",
    },
    "declared-in-the-launcher": {
        "tile.cu": TILE,
        "run.cu": DECL
        + """void run(float* o, const float* i, int m, int n) {
    tile_sum <<< dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16) >>> (o, i, m, n);
}
int main() { run(0, 0, 64, 48); }""",
    },
    "launcher-in-the-directory-above": {
        "kern/tile.cu": TILE,
        "app.cu": 'extern "C" {}\n'
        + DECL
        + """int main() {
    const int R = 128, C = 96;
    float *o, *i;
    tile_sum<<<dim3(C / 16, R / 16), dim3(16, 16, 1)>>>(o, i, R, C);
}""",
    },
    "launch-api-in-a-cpp-file": {
        "tile.cu": TILE,
        "host.cpp": DECL
        + """int main() {
    int rows = 64, cols = 64;
    float *o, *i;
    void* args[] = {&o, &i, &rows, &cols};
    cudaLaunchKernel((void*)tile_sum, dim3(4, 4), dim3(16, 16), args, 0, 0);
}""",
    },
}


def _write(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return next(tmp_path / r for r in files if r.endswith("tile.cu"))


@pytest.mark.parametrize("tree", sorted(TREES))
def test_a_kernel_takes_the_launch_of_the_file_that_declares_it(tmp_path: Path, tree: str) -> None:
    kernel = _write(tmp_path, TREES[tree])
    tu = parse_file(kernel)
    partial, diags = infer_binding(tu, "tile_sum")
    launch = partial.get("launch")
    assert launch is not None, [d.message for d in diags]
    assert launch["block"][:2] == [16, 16]
    assert any(d.code == "C2N2100" and "launch" in d.message for d in diags)
    bnd, notes = binding_from_inference(tu, "tile_sum")
    assert bnd is not None, [d.message for d in notes]


def test_a_file_defining_its_own_kernel_of_that_name_gives_no_launch(tmp_path: Path) -> None:
    other = TILE.replace("* 2.0f", "* 3.0f") + (
        "int main() { float *o, *i; tile_sum<<<dim3(2, 2), dim3(16, 16)>>>(o, i, 32, 32); }\n"
    )
    kernel = _write(tmp_path, {"tile.cu": TILE, "other.cu": other})
    partial, diags = infer_binding(parse_file(kernel), "tile_sum")
    assert "launch" not in partial
    assert any(d.code == "C2N2101" and "launch configuration" in d.message for d in diags)


def test_a_file_that_sees_no_declaration_of_the_kernel_gives_no_launch(tmp_path: Path) -> None:
    runner = "int main() { float *o, *i; tile_sum<<<dim3(2, 2), dim3(16, 16)>>>(o, i, 32, 32); }\n"
    kernel = _write(tmp_path, {"tile.cu": TILE, "runner.cu": '#include "elsewhere.h"\n' + runner})
    partial, _ = infer_binding(parse_file(kernel), "tile_sum")
    assert "launch" not in partial
