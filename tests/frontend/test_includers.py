"""Kernels of a file that a source file includes are lowered with that file's definitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

MAIN = """
#include <stdio.h>
#define real float
#define SCALE 3
typedef struct {{ int first; int count; }} Span;
#include "{name}"
int main() {{
    Span* s; real* w; real* o; int n = 4;
    span_sum<<<1, 32>>>(s, w, o, n);
    return 0;
}}
"""

KERNEL = """
__global__ void span_sum(const Span* spans, const real* w, real* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    real acc = 0;
    for (int e = spans[i].first; e < spans[i].first + spans[i].count; e++) acc += w[e];
    out[i] = SCALE * acc;
}
"""


def _tree(tmp_path: Path, kernel_dir: str = "") -> Path:
    sub = tmp_path / kernel_dir if kernel_dir else tmp_path
    sub.mkdir(parents=True, exist_ok=True)
    (sub / "span_kernel.cu").write_text(KERNEL)
    inc = f"{kernel_dir}/span_kernel.cu" if kernel_dir else "span_kernel.cu"
    (tmp_path / "main.cu").write_text(MAIN.format(name=inc))
    return sub / "span_kernel.cu"


def test_included_kernel_uses_the_includers_definitions(tmp_path: Path) -> None:
    path = _tree(tmp_path)
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    assert Path(k.loc.file).name == "span_kernel.cu" and k.loc.line == 2
    assert [s.kernel for s in tu.launch_sites] == ["span_sum"]
    spans = np.array([[0, 3], [2, 0], [1, 4], [5, 1]], np.int32)
    w = np.arange(8, dtype=np.float32)
    got = run_kernel(
        tu,
        "span_sum",
        grid=(1,),
        block=(32,),
        args={"spans": spans.reshape(-1), "w": w, "out": np.zeros(4, np.float32), "n": 4},
    )["out"]
    np.testing.assert_array_equal(got, 3 * np.array([3, 0, 10, 5], np.float32))


def test_kernel_in_a_subdirectory(tmp_path: Path) -> None:
    tu = parse_file(_tree(tmp_path, "kernel"))
    assert tu.rejected == {} and [k.name for k in tu.kernels] == ["span_sum"]


def test_a_file_nobody_includes_keeps_its_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "alone.cu"
    path.write_text(KERNEL)
    tu = parse_file(path)
    (d, *_) = tu.rejected["span_sum"]
    assert d.code == "C2N1022" and d.loc.line == 2


def test_a_kernel_refused_in_the_includer_too_stays_refused(tmp_path: Path) -> None:
    path = _tree(tmp_path)
    path.write_text(
        KERNEL.replace("out[i] = SCALE * acc;", "out[i] = SCALE * acc; goto end; end:;")
    )
    tu = parse_file(path)
    assert "span_sum" in tu.rejected and tu.kernels == ()


def test_a_helper_function_of_the_includer(tmp_path: Path) -> None:
    (tmp_path / "k.cuh").write_text(
        "__global__ void twice(float* o, int n) {\n"
        "  int i = threadIdx.x;\n  if (i < n) o[i] = helper(o[i]);\n}\n"
    )
    (tmp_path / "main.cu").write_text(
        '__device__ float helper(float x) { return 2.0f * x; }\n#include "k.cuh"\n'
        "int main() { twice<<<1, 32>>>(0, 0); }\n"
    )
    tu = parse_file(tmp_path / "k.cuh")
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(
        tu, "twice", grid=(1,), block=(32,), args={"o": np.arange(8, dtype=np.float32), "n": 8}
    )["o"]
    np.testing.assert_array_equal(got, 2 * np.arange(8, dtype=np.float32))
