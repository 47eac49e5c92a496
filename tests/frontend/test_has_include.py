"""``__has_include`` in ``#if``: toolkit and system headers are there, a header of the tree is
there when it can be found, anything else is not (cuda2nki.frontend.hasinclude); and headers in
another encoding than UTF-8 are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.frontend.preprocess import preprocess

KERNEL = "__global__ void k(float* p) { p[0] = PICK; }\n"


def _pick(tmp_path: Path, cond: str, include_dirs: tuple[str, ...] = ()) -> str:
    main = tmp_path / "k.cu"
    main.write_text(f"#if {cond}\n#define PICK 1\n#else\n#define PICK 2\n#endif\n{KERNEL}")
    pre = preprocess(main.read_text(), str(main), include_dirs=include_dirs)
    assert not [d for d in pre.diagnostics if d.code == "C2N1003"], pre.diagnostics
    return "1" if "p[0] = 1;" in pre.text else "2" if "p[0] = 2;" in pre.text else "?"


@pytest.mark.parametrize(
    "cond",
    [
        "__has_include(<nvml.h>)",
        "__has_include(<cuda_bf16.h>)",
        "__has_include( <vector> )",
        "__has_include(<thrust/sort.h>)",
        '__has_include("cuda_fp16.h")',
        "defined(NOTHING) || __has_include(<cooperative_groups.h>)",
    ],
)
def test_toolkit_and_system_headers_are_present(tmp_path, cond):
    assert _pick(tmp_path, cond) == "1"


@pytest.mark.parametrize(
    "cond",
    [
        "__has_include(<no_such_library_header.h>)",
        '__has_include("missing_helper.cuh")',
        "!__has_include(<cuda_runtime.h>)",
        '__has_include_next("gone/here.h")',
    ],
)
def test_absent_headers_take_the_fallback_branch(tmp_path, cond):
    assert _pick(tmp_path, cond) == "2"


def test_tree_headers_are_found_next_to_the_file_on_the_path_or_in_the_tree(tmp_path):
    (tmp_path / ".git").mkdir()  # the tree's root
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "mine.cuh").write_text("#pragma once\n")
    (tmp_path / "side.h").write_text("#pragma once\n")
    assert _pick(tmp_path, '__has_include("side.h")') == "1"
    assert _pick(tmp_path, "__has_include(<mine.cuh>)", (str(tmp_path / "inc"),)) == "1"
    sub = tmp_path / "src"
    sub.mkdir()
    assert _pick(sub, '__has_include("mine.cuh")') == "1"  # found elsewhere in the tree
    assert _pick(sub, '__has_include("theirs.cuh")') == "2"


def test_a_latin1_header_is_read(tmp_path):
    (tmp_path / "old.h").write_bytes(b"// r\xe9sum\xe9 des fonctions\n#define GAIN 4\n")
    main = tmp_path / "k.cu"
    main.write_text('#include "old.h"\n__global__ void k(float* p) { p[0] = GAIN; }\n')
    tu = parse_file(main)
    assert tu.rejected == {} and not [d for d in tu.diagnostics if d.code == "C2N1003"]
    assert "k" in {k.name for k in tu.kernels}
