"""A plain C/C++ header that defines a kernel (a book's ``common/book.h`` included by every
example) is a CUDA file of the tree: its kernels are counted once, in the header, not again in
each file that includes it; headers without a kernel stay out of the census."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuda2nki.batch.discover import discover, is_cuda_file
from cuda2nki.batch.migrate import MigrateOptions, migrate

HEADER = """\
#pragma once
// __global__ void not_a_kernel() { } in a comment
__global__ void to_bytes(unsigned char* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = (unsigned char)(255.0f * in[i]);
}
"""

EXAMPLE = """\
#include "../common/kit.{ext}"
__global__ void {name}(float* y, const float* x, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}}
int main() {{
    int n = 1000;
    float *x, *y;
    {name}<<<(n + 127) / 128, 128>>>(y, x, n);
    return 0;
}}
"""


@pytest.mark.parametrize("ext", ["h", "hpp", "hh"])
def test_a_kernel_header_is_counted_once(tmp_path: Path, ext: str) -> None:
    src = tmp_path / "src"
    (src / "common").mkdir(parents=True)
    (src / "common" / f"kit.{ext}").write_text(HEADER)
    (src / "common" / "plain.h").write_text("int helper(int);\n__global__ void decl(float*);\n")
    for d, name in (("ch1", "twice"), ("ch2", "double_it")):
        (src / d).mkdir()
        (src / d / f"{name}.cu").write_text(EXAMPLE.format(ext=ext, name=name))
    rels = [f.rel for f in discover(src)]
    assert rels == ["ch1/twice.cu", "ch2/double_it.cu", f"common/kit.{ext}"]
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, mode="examine"))
    report = json.loads((out / "report.json").read_text())
    kernels = sorted((r["file"], r["kernel"]) for r in report["kernels"])
    assert kernels == [
        ("ch1/twice.cu", "twice"),
        ("ch2/double_it.cu", "double_it"),
        (f"common/kit.{ext}", "to_bytes"),
    ]


def test_headers_without_a_kernel_definition_are_not_cuda_files(tmp_path: Path) -> None:
    h = tmp_path / "decl.h"
    h.write_text("__global__ void k(float* x);\n/* __global__ void c() { } */\n")
    assert not is_cuda_file(h)
    g = tmp_path / "defs.hpp"
    g.write_text("template <int B>\n__global__ void k(float* x) { x[0] = B; }\n")
    assert is_cuda_file(g)
