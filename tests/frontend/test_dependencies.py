"""The files a parse reads for its result (:mod:`cuda2nki.frontend.deps`): its headers, the
files including it whose launches it takes and their headers, the same whether their parse is
new or reused from an earlier file of the process."""

from __future__ import annotations

import os
from pathlib import Path

from cuda2nki.frontend import parse_file
from cuda2nki.frontend.deps import recording

KERNEL_H = """\
__global__ void {name}(float* v, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * 2.0f;
}}
"""
APP_CU = """\
#include "sizes.h"
#include "first.cuh"
#include "second.cuh"
int main() {
    float* v;
    cudaMalloc(&v, LENGTH * sizeof(float));
    first_k<<<LENGTH / 64, 64>>>(v, LENGTH);
    second_k<<<LENGTH / 128, 128>>>(v, LENGTH);
}
"""


def _real(p: Path) -> str:
    return os.path.realpath(p)


def test_both_headers_of_one_includer_depend_on_it_and_its_headers(tmp_path) -> None:
    (tmp_path / "first.cuh").write_text(KERNEL_H.format(name="first_k"))
    (tmp_path / "second.cuh").write_text(KERNEL_H.format(name="second_k"))
    (tmp_path / "sizes.h").write_text("#define LENGTH 4096\n")
    (tmp_path / "app.cu").write_text(APP_CU)
    want = {_real(tmp_path / "app.cu"), _real(tmp_path / "sizes.h")}
    for header in ("first.cuh", "second.cuh"):  # the second reuses the includer's parse
        with recording() as seen:
            tu = parse_file(tmp_path / header)
        assert tu.launch_sites, header
        assert want <= seen, header
        assert _real(tmp_path / ("second.cuh" if header == "first.cuh" else "first.cuh")) in seen


def test_a_file_depends_on_its_headers_only_when_nothing_else_is_read(tmp_path) -> None:
    (tmp_path / "sizes.h").write_text("#define LENGTH 4096\n")
    (tmp_path / "k.cu").write_text(
        '#include "sizes.h"\n'
        + KERNEL_H.format(name="own_k")
        + "int main() { float* v; own_k<<<LENGTH / 32, 32>>>(v, LENGTH); }\n"
    )
    (tmp_path / "unrelated.cu").write_text(KERNEL_H.format(name="other_k"))
    with recording() as seen:
        parse_file(tmp_path / "k.cu")
    assert seen == {_real(tmp_path / "sizes.h")}


def test_the_folders_searched_for_a_result_are_noted_as_folders(tmp_path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "first.cuh").write_text(KERNEL_H.format(name="first_k"))
    (tmp_path / "lib" / "second.cuh").write_text(KERNEL_H.format(name="second_k"))
    (tmp_path / "lib" / "sizes.h").write_text("#define LENGTH 4096\n")
    # the includer links a device function of its folder: its parse searches the folder too
    (tmp_path / "lib" / "app.cu").write_text(
        APP_CU
        + "__device__ float twice(float);\n"
        + "__global__ void use_twice(float* w) { w[threadIdx.x] = twice(w[threadIdx.x]); }\n"
    )
    (tmp_path / "lib" / "twice.cu").write_text(
        "__device__ float twice(float q) { return 2 * q; }\n"
    )
    for header in ("first.cuh", "second.cuh"):
        with recording() as seen:
            parse_file(tmp_path / "lib" / header)
        assert f"listing:{_real(tmp_path / 'lib')}" in seen
        assert all(p.startswith(("listing:/", "/")) and "listing:" not in p[1:] for p in seen)
