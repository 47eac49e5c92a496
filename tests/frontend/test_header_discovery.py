"""Headers kept apart from their includers (``common/``, ``utilities/``, ``../../common/x.h``) are
found without ``-I``: by the path they spell, nearest first, in the enclosing repository (or the
migrated tree, or below the file's folder); system headers are never searched for; a header found
nowhere is a C2N1004 warning at its include, whether spelled with quotes or angle brackets."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_file, parse_source
from cuda2nki.frontend.headers import clear_cache, is_system_header, searching_tree

KERNEL = "__global__ void k(float* p) {{ p[0] = {expr}; }}\n"


@pytest.fixture(autouse=True)
def _fresh_indexes():
    clear_cache()
    yield
    clear_cache()


def _tree(root: Path, files: dict[str, str], repo: bool = True) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    if repo:
        (root / ".git").mkdir(exist_ok=True)
    return root


def _codes(tu) -> list[tuple[str, int, int]]:
    return [(d.code, d.loc.line, d.loc.col) for d in tu.diagnostics]


@pytest.mark.parametrize(
    ("spelled", "header_at"),
    [
        ("<bench.h>", "utilities/bench.h"),  # angle, a folder beside the sources' parents
        ('"bench.h"', "common/bench.h"),  # quoted, not beside the file
        ('"../common/bench.h"', "common/bench.h"),  # relative, one level short
        ('"../../common/bench.h"', "common/bench.h"),  # relative, right
        ("<inc/bench.h>", "lib/inc/bench.h"),  # a path suffix
    ],
)
def test_a_header_elsewhere_in_the_repository_is_found(tmp_path, spelled, header_at):
    root = _tree(
        tmp_path,
        {
            "src/kernels/k.cu": f"#include {spelled}\n" + KERNEL.format(expr="SCALE * p[1]"),
            header_at: "#pragma once\n#define SCALE 2.0f\n",
        },
    )
    tu = parse_file(root / "src/kernels/k.cu")
    assert tu.rejected == {} and [k.name for k in tu.kernels] == ["k"]
    codes = _codes(tu)
    if spelled == '"../../common/bench.h"':
        assert codes == []  # on the usual path: nothing to say
    else:
        assert codes == [("C2N1005", 1, 11)]
        assert header_at in tu.diagnostics[0].message


def test_a_header_found_in_the_tree_includes_another_found_elsewhere(tmp_path):
    root = _tree(
        tmp_path,
        {
            "app/k.cu": "#include <outer.cuh>\n__global__ void k(float* p) { p[0] = twice(p[1]); }\n",
            "include/outer.cuh": (
                '#pragma once\n#include "scale.h"\n'
                "__device__ float twice(float x) { return SCALE * x; }\n"
            ),
            "config/scale.h": "#pragma once\n#define SCALE 2.0f\n",
        },
    )
    tu = parse_file(root / "app/k.cu")
    assert tu.rejected == {}
    notes = [(d.code, Path(d.loc.file).name, d.loc.line) for d in tu.diagnostics]
    assert notes == [("C2N1005", "k.cu", 1), ("C2N1005", "outer.cuh", 2)]
    assert tu.function("twice").loc.file.endswith("include/outer.cuh")


def test_the_nearest_of_two_headers_of_one_name_wins(tmp_path):
    root = _tree(
        tmp_path,
        {
            "suite/a/k.cu": "#include <defs.h>\n" + KERNEL.format(expr="VALUE"),
            "suite/utils/defs.h": "#define VALUE 1.0f\n",  # up 1, down 1
            "other/utils/defs.h": "#define VALUE 2.0f\n",  # up 2, down 2
            "suite/a/deep/er/defs.h": "#define VALUE 3.0f\n",  # up 0, down 2: nearest
        },
    )
    tu = parse_file(root / "suite/a/k.cu")
    assert _codes(tu) == [("C2N1005", 1, 11)]
    assert "suite/a/deep/er/defs.h" in tu.diagnostics[0].message
    (root / "suite/a/deep/er/defs.h").unlink()
    clear_cache()
    tu = parse_file(root / "suite/a/k.cu")
    assert "suite/utils/defs.h" in tu.diagnostics[0].message
    assert tu.kernels[0].body.body[0].expr.value.value == 1.0


def test_equally_near_headers_that_differ_are_ambiguous(tmp_path):
    root = _tree(
        tmp_path,
        {
            "src/k.cu": '#include "defs.h"\n' + KERNEL.format(expr="VALUE"),
            "a/defs.h": "#define VALUE 1.0f\n",
            "b/defs.h": "#define VALUE 2.0f\n",
        },
    )
    tu = parse_file(root / "src/k.cu")
    assert [d.code for d in tu.diagnostics] == ["C2N1005", "C2N1006"]
    assert "a/defs.h" in tu.diagnostics[1].message and "b/defs.h" in tu.diagnostics[1].message
    # the same contents twice: one header, nothing ambiguous
    (root / "b/defs.h").write_text("#define VALUE 1.0f\n")
    tu = parse_file(root / "src/k.cu")
    assert [d.code for d in tu.diagnostics] == ["C2N1005"]


def test_system_headers_are_never_searched_for(tmp_path):
    root = _tree(
        tmp_path,
        {
            "src/k.cu": (
                '#include <cuda_runtime.h>\n#include "cuda_fp16.h"\n#include <thrust/sort.h>\n'
                "#include <cublas_v2.h>\n#include <stdio.h>\n#include <vector>\n"
                + KERNEL.format(expr="1.0f")
            ),
            # vendored copies that would break the parse if read
            "third_party/cuda_runtime.h": "#error vendored\n",
            "third_party/thrust/sort.h": "#error vendored\n",
        },
    )
    tu = parse_file(root / "src/k.cu")
    assert tu.diagnostics == () and [k.name for k in tu.kernels] == ["k"]


@pytest.mark.parametrize(
    "name",
    ["stdio.h", "cmath", "cuda_runtime.h", "thrust/device_vector.h", "cub/cub.cuh",
     "cooperative_groups/reduce.h", "curand_kernel.h", "cufftXt.h", "sys/time.h", "mma.h"],
)  # fmt: skip
def test_system_header_list(name):
    assert is_system_header(name)


@pytest.mark.parametrize(
    "name", ["helper_cuda.h", "polybench.h", "cuda_common.h", "common/book.h", "utils.cuh"]
)
def test_project_headers_are_not_system_headers(name):
    assert not is_system_header(name)


@pytest.mark.parametrize(
    ("prefix", "line", "col"),
    [
        ("#include <missing.h>\n", 1, 11),  # the fast path
        ("#define N 4\n#  include   <missing.h>\n", 2, 15),  # object-like macros
        ('#include "missing.h"\n', 1, 11),  # quoted: the full preprocessor
        ("#define F(x) (x)\n#include <missing.h>\n", 2, 11),  # conditionals path
    ],
)
def test_a_missing_header_is_a_warning_at_its_include(tmp_path, prefix, line, col):
    root = _tree(tmp_path, {"k.cu": prefix + KERNEL.format(expr="1.0f")})
    tu = parse_file(root / "k.cu")
    assert _codes(tu) == [("C2N1004", line, col)]
    assert "missing.h" in tu.diagnostics[0].message


def test_an_include_in_an_inactive_branch_is_not_reported(tmp_path):
    src = "#ifdef _WIN32\n#include <win_only.h>\n#endif\n" + KERNEL.format(expr="1.0f")
    root = _tree(tmp_path, {"k.cu": src})
    assert parse_file(root / "k.cu").diagnostics == ()


def test_text_without_a_file_is_not_searched_from(tmp_path, monkeypatch):
    _tree(tmp_path, {"include/defs.h": "#define VALUE 1.0f\n"})
    monkeypatch.chdir(tmp_path)
    tu = parse_source("#include <defs.h>\n" + KERNEL.format(expr="VALUE"), "k.cu")
    assert [d.code for d in tu.diagnostics][:1] == ["C2N1004"]


def test_outside_a_repository_the_search_stays_in_the_tree(tmp_path):
    files = {
        "suite/CUDA/bench/k.cu": "#include <defs.h>\n" + KERNEL.format(expr="VALUE"),
        "suite/CUDA/utilities/defs.h": "#define VALUE 1.0f\n",
    }
    root = _tree(tmp_path, files, repo=False)
    main = root / "suite/CUDA/bench/k.cu"
    # a single file: only its own folder is searched
    assert [d.code for d in parse_file(main).diagnostics][:1] == ["C2N1004"]
    # a migrated tree: the whole tree
    with searching_tree(root / "suite/CUDA"):
        tu = parse_file(main)
    assert [d.code for d in tu.diagnostics] == ["C2N1005"] and tu.rejected == {}


def test_hidden_and_build_folders_are_not_searched(tmp_path):
    root = _tree(
        tmp_path,
        {
            "src/k.cu": "#include <gen.h>\n#include <cfg.h>\n" + KERNEL.format(expr="1.0f"),
            "build/gen.h": "#define GEN 1\n",
            ".cache/cfg.h": "#define CFG 1\n",
        },
    )
    assert [d.code for d in parse_file(root / "src/k.cu").diagnostics] == ["C2N1004"] * 2


def test_port_bind_and_check_of_one_file_find_the_header(tmp_path, capsys):
    from cuda2nki.cli.main import main

    root = _tree(
        tmp_path,
        {
            "bench/axpy/axpy.cu": (
                '#include "../common/sizes.h"\n'
                "__global__ void axpy(real_t* y, const real_t* x, real_t a, int n) {\n"
                "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "    if (i < n) y[i] = a * x[i] + y[i];\n"
                "}\n"
                "void run(real_t* y, const real_t* x) {\n"
                "    axpy<<<(N + 127) / 128, 128>>>(y, x, 2.0f, N);\n"
                "}\n"
            ),
            "shared/common/sizes.h": "#pragma once\n#define N 300\ntypedef float real_t;\n",
        },
    )
    cu = root / "bench/axpy/axpy.cu"
    port, toml = tmp_path / "axpy.py", tmp_path / "axpy.toml"
    capsys.readouterr()
    assert main(["port", str(cu), "-o", str(port)]) == 0
    said = capsys.readouterr()
    assert "C2N1005" in said.err and "shared/common/sizes.h" in said.err
    assert main(["bind", str(cu), "-o", str(toml)]) == 0
    assert "# TODO" not in toml.read_text().split("\n", 2)[2] and "n = 300" in toml.read_text()
    assert main(["check", str(cu), str(port)]) == 0
    assert "verdict: PASS" in capsys.readouterr().out


def test_a_found_header_that_breaks_preprocessing_is_left_out(tmp_path):
    root = _tree(
        tmp_path,
        {
            "src/k.cu": "#include <platform.h>\n" + KERNEL.format(expr="1.0f"),
            "ports/win/platform.h": '#error "this header is for another platform"\n',
        },
    )
    tu = parse_file(root / "src/k.cu")
    assert [k.name for k in tu.kernels] == ["k"] and tu.rejected == {}
    got = {(d.code, str(d.severity)) for d in tu.diagnostics}
    assert got == {("C2N1004", "warning"), ("C2N1003", "note")}
