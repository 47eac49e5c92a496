"""``migrate``'s cache on a tree where one file's result depends on others: a device function
defined in another file, a header's kernel bound from its includer's launch, a header included.
A resumed run redoes exactly the files whose result such a change touches, and its report equals
that of a fresh run; a change to an unrelated file leaves the others cached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.frontend.headers import clear_cache

#: a kernel calling a device function it only declares (defined in warp_fn.cu)
USER_CU = """\
#include "consts.h"
__device__ float warp_value(float v);

__global__ void apply_warp(float* dst, const float* src, int count) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x)
        dst[k] = warp_value(src[k]) + OFFSET;
}

int main() {
    int count = 2048;
    float *x, *y;
    cudaMalloc(&x, count * sizeof(float));
    cudaMalloc(&y, count * sizeof(float));
    apply_warp<<<16, 128>>>(y, x, count);
    return 0;
}
"""
WARP_CU = "__device__ float warp_value(float v) {{ return v * {scale}f - 1.0f; }}\n"
CONSTS_H = "#define OFFSET {offset}f\n"

#: a header's kernel, launched only by the file including it
COLS_CUH = """\
__global__ void shift_cols(float* grid2d, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < width && y < height) grid2d[y * width + x] += 3.0f;
}
"""
RUNNER_CU = """\
#include "dims.h"
#include "kernels/cols.cuh"
int main() {{
    int width = 1024, height = HEIGHT;
    float* g;
    cudaMalloc(&g, width * height * sizeof(float));
    dim3 threads({block});
    dim3 blocks((width + {block} - 1) / {block}, height);
    shift_cols<<<blocks, threads>>>(g, width, height);
    return 0;
}}
"""
DIMS_H = "#define HEIGHT {height}\n"
#: a program of its own
LONE_CU = """\
__global__ void square_all(int len, double* v) {
    int j = threadIdx.x + blockDim.x * blockIdx.x;
    if (j < len) v[j] = v[j] * v[j];
}
int main() { int len = 512; double* v; cudaMalloc(&v, len * 8); square_all<<<4, 128>>>(len, v); }
"""


#: the files of the census (consts.h, without kernels, is not one)
FILES = 5


@pytest.fixture(autouse=True)
def _fresh_indexes():
    clear_cache()
    yield
    clear_cache()


def _tree(root: Path) -> Path:
    src = root / "src"
    (src / "calc").mkdir(parents=True)
    (src / "stencil" / "kernels").mkdir(parents=True)
    (src / "misc").mkdir()
    (src / "calc" / "user.cu").write_text(USER_CU)
    (src / "calc" / "warp_fn.cu").write_text(WARP_CU.format(scale="2.5"))
    (src / "calc" / "consts.h").write_text(CONSTS_H.format(offset="0.25"))
    (src / "stencil" / "kernels" / "cols.cuh").write_text(COLS_CUH)
    (src / "stencil" / "runner.cu").write_text(RUNNER_CU.format(block=128))
    (src / "stencil" / "dims.h").write_text(DIMS_H.format(height=32))
    (src / "misc" / "lone.cu").write_text(LONE_CU)
    return src


def _port(out: Path, records: list[dict], kernel: str) -> str:
    rec = next(r for r in records if r["kernel"] == kernel)
    assert rec["status"] == "automatic", rec
    return (out / rec["port"]).read_text()


def _same_as_fresh(src: Path, tmp_path: Path, res) -> None:
    clear_cache()
    fresh = migrate(MigrateOptions(src, tmp_path / "fresh"))
    assert res.report == fresh.report


@pytest.mark.parametrize(
    ("edit", "redone"),
    [
        # the file defining the linked device function: only its user is redone with it
        (("calc/warp_fn.cu", WARP_CU.format(scale="4.5")), {"calc/warp_fn.cu", "calc/user.cu"}),
        # a header included (no kernel: not a file of the census): its includer is redone
        (("calc/consts.h", CONSTS_H.format(offset="0.75")), {"calc/user.cu"}),
        # the includer's launch geometry: the header whose kernel it launches is redone
        (
            ("stencil/runner.cu", RUNNER_CU.format(block=256)),
            {"stencil/runner.cu", "stencil/kernels/cols.cuh"},
        ),
        # a header the includer includes: both again
        (
            ("stencil/dims.h", DIMS_H.format(height=48)),
            {"stencil/runner.cu", "stencil/kernels/cols.cuh"},
        ),
        # an unrelated program: nothing else
        (("misc/lone.cu", LONE_CU.replace("v[j] * v[j]", "v[j] * 2.0")), {"misc/lone.cu"}),
    ],
)
def test_a_change_redoes_the_files_whose_result_it_touches(tmp_path, edit, redone) -> None:
    src = _tree(tmp_path)
    out = tmp_path / "out"
    first = migrate(MigrateOptions(src, out))
    assert first.computed == FILES
    rel, text = edit
    (src / rel).write_text(text)
    again = migrate(MigrateOptions(src, out))
    timing = json.loads((out / "timing.json").read_text())["per_file"]
    assert {f for f, t in timing.items() if not t["cached"]} == redone
    assert again.computed == len(redone) and again.cached == FILES - len(redone)
    _same_as_fresh(src, tmp_path, again)


def test_the_redone_ports_see_the_changed_files(tmp_path) -> None:
    src = _tree(tmp_path)
    out = tmp_path / "out"
    first = migrate(MigrateOptions(src, out))
    assert "2.5" in _port(out, first.records, "apply_warp")
    assert "block (128)" in _port(out, first.records, "shift_cols")
    (src / "calc" / "warp_fn.cu").write_text(WARP_CU.format(scale="4.5"))
    (src / "stencil" / "runner.cu").write_text(RUNNER_CU.format(block=256))
    again = migrate(MigrateOptions(src, out))
    warp = _port(out, again.records, "apply_warp")
    assert "4.5" in warp and "2.5" not in warp
    assert "block (256)" in _port(out, again.records, "shift_cols")


def test_an_entry_without_its_dependencies_is_not_used(tmp_path) -> None:
    """A cache entry naming no dependencies (written by an older format) is redone."""
    src = _tree(tmp_path)
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out))
    for p in (out / ".cuda2nki" / "cache").glob("*.json"):
        entry = json.loads(p.read_text())
        del entry["deps"]
        p.write_text(json.dumps(entry))
    assert migrate(MigrateOptions(src, out)).computed == FILES


def test_a_definition_elsewhere_in_the_tree_is_linked_and_tracked(tmp_path) -> None:
    src = _tree(tmp_path)
    (src / "calc" / "warp_fn.cu").unlink()
    (src / "common").mkdir()
    (src / "common" / "warp_fn.cu").write_text(WARP_CU.format(scale="2.5"))
    out = tmp_path / "out"
    first = migrate(MigrateOptions(src, out))
    assert "2.5" in _port(out, first.records, "apply_warp")
    (src / "common" / "warp_fn.cu").write_text(WARP_CU.format(scale="4.5"))
    again = migrate(MigrateOptions(src, out))
    assert again.computed == 2  # the definition's file and its user
    assert "4.5" in _port(out, again.records, "apply_warp")


#: a kernel with the host function launching it; the sizes come from main.cu's call
SCALE_CU = """\
__global__ void scale_by(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
void launch_scale(float* y, const float* x, int n) {
    scale_by<<<(n + 255) / 256, 256>>>(y, x, 2.0f, n);
}
"""
CALLER_CU = """\
void launch_scale(float* y, const float* x, int n);
int main() {{
    float *y, *x;
    int total = {n};
    cudaMalloc(&y, total * sizeof(float));
    cudaMalloc(&x, total * sizeof(float));
    launch_scale(y, x, total);
    return 0;
}}
"""


def test_a_launchers_caller_elsewhere_is_tracked(tmp_path) -> None:
    src = tmp_path / "src"
    (src / "axpy").mkdir(parents=True)
    (src / "axpy" / "scale.cu").write_text(SCALE_CU)
    (src / "axpy" / "main.cu").write_text(CALLER_CU.format(n=4096))
    (src / "lone.cu").write_text(LONE_CU)
    out = tmp_path / "out"
    first = migrate(MigrateOptions(src, out))
    (rec,) = [r for r in first.records if r["kernel"] == "scale_by"]
    assert any("n = 4096" in d["message"] for d in rec["diagnostics"]), rec
    (src / "axpy" / "main.cu").write_text(CALLER_CU.format(n=6144))
    again = migrate(MigrateOptions(src, out))
    assert again.computed == 2  # the caller and the launcher's file, not lone.cu
    (rec,) = [r for r in again.records if r["kernel"] == "scale_by"]
    assert any("n = 6144" in d["message"] for d in rec["diagnostics"]), rec
    _same_as_fresh(src, tmp_path, again)


@pytest.mark.parametrize(
    ("added", "redone"),
    [
        # a second includer of the header in the folder searched for includers
        ("stencil/runner2.cu", {"stencil/runner2.cu", "stencil/kernels/cols.cuh"}),
        # a file in a folder no result searched: itself only
        ("misc/more/extra.cu", {"misc/more/extra.cu"}),
    ],
)
def test_a_file_added_where_a_result_searched_redoes_it(tmp_path, added, redone) -> None:
    src = _tree(tmp_path)
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out))
    (src / added).parent.mkdir(parents=True, exist_ok=True)
    (src / added).write_text(RUNNER_CU.format(block=64))
    again = migrate(MigrateOptions(src, out))
    timing = json.loads((out / "timing.json").read_text())["per_file"]
    assert {f for f, t in timing.items() if not t["cached"]} == redone
    _same_as_fresh(src, tmp_path, again)
