"""A kernel file included by the main file after the definitions it uses (``typedef float fp;``,
``#define`` sizes, then ``#include "kernel.cu"``): read alone it does not stand, so it is read
as the including file sees it, and its launches are taken from there."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.frontend import parse_file
from cuda2nki.lift.infer import binding_from_inference

#: uses a typedef and a macro that only the including file defines
KERNEL = """__global__ void decay({real}* d_out, const {real}* d_in, int count) {{
    int i = blockIdx.x * {threads} + threadIdx.x;
    if (i < count) d_out[i] = d_in[i] * ({real})0.5 + ({real})OFFSET;
}}
"""

MAIN = """#include <stdio.h>
{defs}
#include "{kernel}"
int main(int argc, char** argv) {{
    int n = 1000;
    {real} *a, *b;
    cudaMalloc((void**)&a, n * sizeof({real}));
    cudaMalloc((void**)&b, n * sizeof({real}));
    dim3 threads({threads});
    dim3 blocks((n + {threads} - 1) / {threads});
    decay<<<blocks, threads>>>(b, a, n);
    return 0;
}}
"""

SPELLINGS = [
    ("typedef float fp;\n#define OFFSET 2\n#define NUMBER_THREADS 128", "fp", "NUMBER_THREADS"),
    ("#define fp float\n#define OFFSET 1.5f\n#define BLOCK 64", "fp", "BLOCK"),
    ("typedef float real_t;\nconst int TPB = 256;\n#define OFFSET 0", "real_t", "TPB"),
]


def _tree(tmp_path: Path, defs: str, real: str, threads: str, kernel: str = "kernel.cu") -> Path:
    src = tmp_path / "app"
    src.mkdir()
    (src / kernel).write_text(KERNEL.format(real=real, threads=threads))
    (src / "main.cu").write_text(
        MAIN.format(defs=defs, kernel=kernel, real="float", threads=threads)
    )
    return src / kernel


@pytest.mark.parametrize(("defs", "real", "threads"), SPELLINGS)
def test_an_included_kernel_file_is_read_as_its_includer_sees_it(
    tmp_path: Path, defs: str, real: str, threads: str
) -> None:
    tu = parse_file(_tree(tmp_path, defs, real, threads))
    assert not tu.rejected and [k.name for k in tu.kernels] == ["decay"]
    assert not [d for d in tu.diagnostics if d.severity >= 2]
    bnd, _ = binding_from_inference(tu, "decay")
    assert bnd is not None and bnd.tensor("d_out").shape == ("count",)


@pytest.mark.parametrize("kernel", ["kernel.cu", "decay_kernel.cuh"])
def test_migrate_checks_an_included_kernel_file(tmp_path: Path, kernel: str) -> None:
    defs, real, threads = SPELLINGS[0]
    path = _tree(tmp_path, defs, real, threads, kernel)
    res = migrate(MigrateOptions(path.parent, tmp_path / "out", check=True, timeout=600))
    recs = {(r["file"], r["kernel"]): r for r in res.records}
    r = recs[(kernel, "decay")]
    assert r["status"] in ("automatic", "literal") and r["verdict"] == "pass", r
    assert recs[("main.cu", "")]["status"] == "none"
    assert res.report["summary"]["kernels"] == 1


def test_a_kernel_file_nobody_includes_is_refused_with_its_reason(tmp_path: Path) -> None:
    defs, real, threads = SPELLINGS[0]
    path = _tree(tmp_path, defs, real, threads)
    (path.parent / "main.cu").write_text("int main() { return 0; }\n")
    tu = parse_file(path)
    assert "decay" in tu.rejected and tu.rejected["decay"][0].code == "C2N1022"


def test_an_error_the_includer_also_sees_is_kept(tmp_path: Path) -> None:
    defs, real, threads = SPELLINGS[0]
    path = _tree(tmp_path, defs, real, threads)
    path.write_text(path.read_text().replace("(fp)OFFSET", "(fp)OFFSET + undefined_name"))
    tu = parse_file(path)
    assert "decay" in tu.rejected
    assert any(d.code == "C2N1020" for d in tu.rejected["decay"])


def test_a_fifo_in_the_tree_is_never_opened(tmp_path: Path) -> None:
    """Looking for the files that include a kernel file reads the sources near it; a named pipe
    among them (``ff.cu``) would block that read forever, so only regular files are read."""
    import os
    import threading

    defs, real, threads = SPELLINGS[0]
    path = _tree(tmp_path, defs, real, threads)
    os.mkfifo(path.parent / "ff.cu")
    os.mkfifo(path.parent / "pipe.cuh")
    got: list = []
    worker = threading.Thread(target=lambda: got.append(parse_file(path)), daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "parsing blocked on a FIFO"
    assert [k.name for k in got[0].kernels] == ["decay"]


def test_a_kernel_file_looks_for_its_includer_nearby_only(tmp_path: Path) -> None:
    """Includers are looked for beside the kernel file and in the folder above it, no further:
    a main file two folders up is not read (though header discovery would let its
    ``#include "kernel.cu"`` reach the file by name)."""
    defs, real, threads = SPELLINGS[0]
    path = _tree(tmp_path, defs, real, threads)
    nested = tmp_path / "app" / "sub" / "deeper"
    nested.mkdir(parents=True)
    moved = nested / "kernel.cu"
    path.rename(moved)
    tu = parse_file(moved)  # main.cu, two directories up, is not looked at for a source file
    assert "decay" in tu.rejected


def test_an_includer_one_folder_up_is_found(tmp_path: Path) -> None:
    defs, real, threads = SPELLINGS[0]
    path = _tree(tmp_path, defs, real, threads)
    (tmp_path / "app" / "sub").mkdir()
    moved = tmp_path / "app" / "sub" / "kernel.cu"
    path.rename(moved)
    main = tmp_path / "app" / "main.cu"
    main.write_text(main.read_text().replace('"kernel.cu"', '"sub/kernel.cu"'))
    tu = parse_file(moved)
    assert not tu.rejected and [k.name for k in tu.kernels] == ["decay"]
