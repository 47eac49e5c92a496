"""A header's kernels launched from another file of the tree: the launches of the source files
that include the header (directly or through other headers) are the header's host evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.cli.main import main
from cuda2nki.frontend import parse_file
from cuda2nki.frontend.launchers import including_sources
from cuda2nki.lift.infer import binding_from_inference

#: two kernels, no launch in the header
OPS = """#pragma once
__global__ void scale_rows(float* out, const float* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) out[r * cols + c] = 2.0f * in[r * cols + c];
}
__global__ void shift(float* y, const float* x, int n) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
"""
#: a launcher function per kernel, dim3 geometry for the 2-D one
RUNNER = """#include "{include}"
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
void run_scale(float* d_out, const float* d_in, int M, int N) {{
    dim3 block(32, 8);
    dim3 grid(CEIL_DIV(N, 32), CEIL_DIV(M, 8));
    scale_rows<<<grid, block>>>(d_out, d_in, M, N);
}}
void run_shift(float* dst, const float* src, int len, int threads) {{
    shift<<<CEIL_DIV(len, threads), threads>>>(dst, src, len);
}}
int main() {{ run_shift(0, 0, 1000, 64); return 0; }}
"""


def _tree(tmp_path: Path, layout: str) -> Path:
    """``ops.cuh`` and a runner that includes it: beside it (``flat``), or from the directory
    above through an umbrella header (``nested``, as in ``src/kernels/*.cuh``)."""
    src = tmp_path / "src"
    if layout == "flat":
        src.mkdir()
        (src / "ops.cuh").write_text(OPS)
        (src / "runner.cu").write_text(RUNNER.format(include="ops.cuh"))
        return src / "ops.cuh"
    (src / "kernels").mkdir(parents=True)
    (src / "kernels" / "ops.cuh").write_text(OPS)
    (src / "kernels.cuh").write_text('#pragma once\n#include "kernels/ops.cuh"\n')
    (src / "runner.cu").write_text(RUNNER.format(include="kernels.cuh"))
    return src / "kernels" / "ops.cuh"


@pytest.mark.parametrize("layout", ["flat", "nested"])
def test_header_kernels_take_the_launches_of_the_runner(tmp_path: Path, layout: str) -> None:
    header = _tree(tmp_path, layout)
    assert including_sources(header) == [tmp_path / "src" / "runner.cu"]
    tu = parse_file(header)
    sites = {s.kernel: s for s in tu.launch_sites}
    assert set(sites) == {"scale_rows", "shift"}
    assert sites["scale_rows"].loc.file.endswith("runner.cu") and sites["scale_rows"].loc.line == 6
    bnd, _ = binding_from_inference(tu, "scale_rows")
    assert bnd is not None and list(bnd.block) == [32, 8]
    assert tuple(bnd.tensor("out").shape) == ("rows", "cols")
    bnd, diags = binding_from_inference(tu, "shift")
    assert bnd is not None and list(bnd.block) == [64]  # the launcher's caller passes 64
    launch = next(d for d in diags if "inferred launch" in d.message)
    assert launch.loc.file.endswith("runner.cu") and launch.loc.line == 9
    assert "runner.cu:11: run_shift(0, 0, 1000, 64)" in launch.message  # the caller's values
    assert bnd.defaults["n"] == 1000


def test_bind_cites_the_runner(tmp_path: Path, capsys) -> None:
    header = _tree(tmp_path, "nested")
    assert main(["bind", str(header)]) == 0
    out, err = capsys.readouterr()
    assert "runner.cu:6: inferred launch" in out and "runner.cu:9: inferred launch" in out
    assert "# TODO (" not in out and "items to complete" not in err


def test_a_header_nobody_includes_has_no_launch(tmp_path: Path) -> None:
    header = _tree(tmp_path, "flat")
    (header.parent / "runner.cu").write_text(RUNNER.format(include="other.cuh"))
    tu = parse_file(header)
    assert not tu.launch_sites
    # the 2-D kernel's layout follows its block's shape: no launch is guessed for it
    assert binding_from_inference(tu, "scale_rows")[0] is None
    # the 1-D one takes a default launch covering its guard, not the runner's
    b, notes = binding_from_inference(tu, "shift")
    assert b is not None and list(b.grid) == ["ceil_div(n, 128)"] and list(b.block) == [128]
    assert any("a default launch" in d.message for d in notes)


def test_a_header_that_launches_its_kernel_keeps_its_own_launch(tmp_path: Path) -> None:
    header = _tree(tmp_path, "flat")
    header.write_text(OPS + "void own(float* y, const float* x) { shift<<<4, 32>>>(y, x, 128); }\n")
    tu = parse_file(header)
    shift_sites = [s for s in tu.launch_sites if s.kernel == "shift"]
    assert len(shift_sites) == 1 and shift_sites[0].loc.file == str(header)
    assert {s.kernel for s in tu.launch_sites} == {"shift", "scale_rows"}


def test_migrate_checks_header_kernels_launched_elsewhere(tmp_path: Path) -> None:
    header = _tree(tmp_path, "nested")
    res = migrate(MigrateOptions(tmp_path / "src", tmp_path / "out", check=True, timeout=600))
    recs = {(r["file"], r["kernel"]): r for r in res.records}
    for k in ("scale_rows", "shift"):
        r = recs[str(header.relative_to(tmp_path / "src")), k]
        assert r["status"] == "automatic" and r["verdict"] == "pass", r


@pytest.mark.parametrize("layout", ["flat", "nested"])
def test_migrate_counts_a_header_kernel_once(tmp_path: Path, layout: str) -> None:
    header = _tree(tmp_path, layout)
    res = migrate(MigrateOptions(tmp_path / "src", tmp_path / "out", mode="examine"))
    where = sorted((r["kernel"], r["file"]) for r in res.records if r["kernel"])
    rel = str(header.relative_to(tmp_path / "src"))
    assert where == [("scale_rows", rel), ("shift", rel)]
    assert res.report["summary"]["kernels"] == 2


def test_a_header_outside_the_migrated_files_is_counted_where_included(tmp_path: Path) -> None:
    header = _tree(tmp_path, "flat")
    opts = MigrateOptions(tmp_path / "src", tmp_path / "out", mode="examine", exclude=("*.cuh",))
    res = migrate(opts)
    where = sorted((r["kernel"], r["file"]) for r in res.records if r["kernel"])
    assert header.suffix == ".cuh"
    assert where == [("scale_rows", "runner.cu"), ("shift", "runner.cu")]


def test_an_edited_runner_is_read_again(tmp_path: Path) -> None:
    header = _tree(tmp_path, "flat")
    assert list(binding_from_inference(parse_file(header), "scale_rows")[0].block) == [32, 8]
    runner = header.parent / "runner.cu"
    runner.write_text(runner.read_text().replace("dim3 block(32, 8)", "dim3 block(16, 4)  "))
    assert list(binding_from_inference(parse_file(header), "scale_rows")[0].block) == [16, 4]


#: two programs of the tree launch the header's kernel, each its own way
SQUARE = (
    "__global__ void square(float* out, const float* in, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = in[i] * in[i];\n}\n"
)
APP = """#include "square.h"
int main() {{
    int count = {n};
    float *src, *dst;
    cudaMalloc(&src, count * sizeof(float));
    cudaMalloc(&dst, count * sizeof(float));
    square<<<(count + {b} - 1) / {b}, {b}>>>(dst, src, count);
    return 0;
}}
"""


@pytest.mark.parametrize(("n", "b"), [(300, 64), (5000, 256)])
def test_of_two_including_files_the_first_in_path_order_binds(
    tmp_path: Path, n: int, b: int
) -> None:
    (tmp_path / "square.h").write_text(SQUARE)
    (tmp_path / "app.cu").write_text(APP.format(n=n, b=b))
    (tmp_path / "bench.cu").write_text(APP.format(n=n + 11, b=1024 // b))
    tu = parse_file(tmp_path / "square.h")
    bnd, diags = binding_from_inference(tu, "square")
    assert bnd is not None and list(bnd.block) == [b] and bnd.defaults["n"] == n
    (note,) = [d for d in diags if "the launch to bind" in d.message]
    assert note.loc.file == str(tmp_path / "app.cu") and note.loc.line == 7
    assert "also launched at bench.cu:7" in note.message


def test_one_including_file_needs_no_choice(tmp_path: Path) -> None:
    (tmp_path / "square.h").write_text(SQUARE)
    (tmp_path / "app.cu").write_text(APP.format(n=300, b=64) + APP.format(n=9, b=32)[20:])
    _, diags = binding_from_inference(parse_file(tmp_path / "square.h"), "square")
    assert not any("the launch to bind" in d.message for d in diags)


def test_a_header_of_the_same_name_in_another_program_is_not_included(tmp_path: Path) -> None:
    """Sibling programs each with their own ``square.h``: a program's ``main.cu`` includes
    the header beside it, not the other program's."""
    for prog, n, b in (("app_one", 300, 64), ("app_two", 5000, 256)):
        (tmp_path / prog).mkdir()
        (tmp_path / prog / "square.h").write_text(SQUARE)
        (tmp_path / prog / "main.cu").write_text(APP.format(n=n, b=b))
    header = tmp_path / "app_two" / "square.h"
    assert including_sources(header) == [tmp_path / "app_two" / "main.cu"]
    bnd, diags = binding_from_inference(parse_file(header), "square")
    assert bnd is not None and list(bnd.block) == [256] and bnd.defaults["n"] == 5000
    assert not any("the launch to bind" in d.message for d in diags)


def test_the_including_files_beside_a_header_come_before_those_above(tmp_path: Path) -> None:
    """``app/square.h`` included by ``app/main.cu`` and, through an include path, by a driver
    in the folder above: the header's own program binds it (the driver is not searched)."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "square.h").write_text(SQUARE)
    (tmp_path / "app" / "main.cu").write_text(APP.format(n=300, b=64))
    (tmp_path / "a_driver.cu").write_text(APP.format(n=5000, b=512))
    header = tmp_path / "app" / "square.h"
    bnd, diags = binding_from_inference(parse_file(header), "square")
    assert bnd is not None and list(bnd.block) == [64] and bnd.defaults["n"] == 300
    assert not any("the launch to bind" in d.message for d in diags)
    # with nothing beside it, the folder above is searched
    (tmp_path / "app" / "main.cu").unlink()
    bnd, _ = binding_from_inference(parse_file(header), "square")
    assert bnd is not None and list(bnd.block) == [512]
