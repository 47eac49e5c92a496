"""A kernel file that its includer reaches only in one configuration of the build (``#ifdef
USE_GPU``), or from a folder several levels up, is read in that includer's context."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.frontend.headers import searching_tree
from cuda2nki.frontend.reach import guarded_includes, macros_for
from cuda2nki.simt import run_kernel

KERNEL = """
__global__ void offset_rows(const real_t* src, real_t* dst, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) dst[r] = bump(src[r]) + (real_t)LANES_PER_ROW;
}
"""

CONTEXT = """#define LANES_PER_ROW 4
typedef float real_t;
__device__ real_t bump(real_t v) { return v * 3.0f; }
"""

LAUNCH = """
int main() {
    real_t* a; real_t* b;
    offset_rows<<<(300 + 127) / 128, 128>>>(a, b, 300);
    return 0;
}
"""

# (guard opening the include's group, the lines closing it, the macros it needs)
GUARDS = {
    "ifdef": ("#ifdef USE_GPU\n", "#endif\n", "USE_GPU=1"),
    "defined-and-compare": (
        "#if defined(WITH_CUDA) && (BACKEND == 2)\n",
        "#endif\n",
        "WITH_CUDA=1, BACKEND=2",
    ),
    "plain-name-with-else": (
        "#if ENABLE_DEVICE_CODE\n",
        '#else\n#include "host_only.h"\n#endif\n',
        "ENABLE_DEVICE_CODE=1",
    ),
    "elif-greater": (
        '#if defined CPU_BUILD\n#include "host_only.h"\n#elif GPU_LEVEL > 2\n',
        "#endif\n",
        "GPU_LEVEL=3",
    ),
    "nested-with-disjunction": (
        "#ifndef MAIN_GUARD\n#if HAVE_CUDA || HAVE_HIP\n",
        "#endif\n#endif\n",
        "HAVE_CUDA=1",
    ),
}


def _direct(tmp_path: Path, guard: str) -> Path:
    opening, closing, _ = GUARDS[guard]
    (tmp_path / "host_only.h").write_text("int host_path();\n")
    (tmp_path / "rows.cuh").write_text(KERNEL)
    (tmp_path / "main.cu").write_text(f'{CONTEXT}{opening}#include "rows.cuh"\n{closing}{LAUNCH}')
    return tmp_path / "rows.cuh"


def _runs(path: Path) -> None:
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    assert [s.kernel for s in tu.launch_sites] == ["offset_rows"]
    x = np.linspace(-2, 2, 300, dtype=np.float32)
    got = run_kernel(
        tu,
        "offset_rows",
        grid=(3,),
        block=(128,),
        args={"src": x, "dst": np.zeros(300, np.float32), "rows": 300},
    )["dst"]
    np.testing.assert_array_equal(got, x * np.float32(3) + np.float32(4))


@pytest.mark.parametrize("guard", sorted(GUARDS))
def test_an_include_in_a_conditional_group(tmp_path: Path, guard: str) -> None:
    path = _direct(tmp_path, guard)
    _runs(path)
    (note,) = [d for d in parse_file(path).diagnostics if d.code == "C2N1008"]
    line = len(CONTEXT.splitlines()) + 1  # the group's first line in main.cu
    assert note.message == (
        f"read as main.cu includes it when built with {GUARDS[guard][2]}"
        f" (the condition at main.cu:{note.loc.line})"
    )
    assert Path(note.loc.file).name == "main.cu" and note.loc.line >= line


def test_through_headers_each_under_its_own_condition(tmp_path: Path) -> None:
    """main.cu -> (#ifdef USE_GPU) gpu.cuh -> config.h, then (#if USE_TILES) detail/rows.cuh;
    the helper is in a sibling header that main.cu includes first."""
    (tmp_path / "detail").mkdir()
    (tmp_path / "detail" / "rows.cuh").write_text(KERNEL)
    (tmp_path / "config.h").write_text(
        "#ifndef CONFIG_H\n#define CONFIG_H\n#define LANES_PER_ROW 4\n#endif\n"
    )
    (tmp_path / "helpers.cuh").write_text(
        "#pragma once\ntypedef float real_t;\n__device__ real_t bump(real_t v) { return 3.0f * v; }\n"
    )
    (tmp_path / "gpu.cuh").write_text(
        '#pragma once\n#include "config.h"\n#if USE_TILES /* tiled path */\n'
        '#include "detail/rows.cuh"\n#endif\n'
        "struct Runner {\n  void go(real_t* a, real_t* b) {\n"
        "    offset_rows<<<(300 + 127) / 128, 128>>>(a, b, 300);\n  }\n};\n"
    )
    (tmp_path / "main.cu").write_text(
        '#include "helpers.cuh"\n#ifdef USE_GPU\n#  include "gpu.cuh"\n#endif\n'
        "int main() { return 0; }\n"
    )
    _runs(tmp_path / "detail" / "rows.cuh")
    tu = parse_file(tmp_path / "detail" / "rows.cuh")
    (note,) = [d for d in tu.diagnostics if d.code == "C2N1008"]
    assert "USE_GPU=1, USE_TILES=1 (the condition at main.cu:2)" in note.message


def test_a_group_no_macro_opens_keeps_the_refusal(tmp_path: Path) -> None:
    (tmp_path / "rows.cuh").write_text(KERNEL)
    (tmp_path / "main.cu").write_text(f'{CONTEXT}#if 0\n#include "rows.cuh"\n#endif\n{LAUNCH}')
    tu = parse_file(tmp_path / "rows.cuh")
    assert "offset_rows" in tu.rejected
    assert not [d for d in tu.diagnostics if d.code == "C2N1008"]


def test_an_unconditional_includer_needs_no_macro(tmp_path: Path) -> None:
    (tmp_path / "rows.cuh").write_text(KERNEL)
    (tmp_path / "main.cu").write_text(
        f'{CONTEXT}#ifdef CPU_ONLY\n#else\n#include "rows.cuh"\n#endif\n{LAUNCH}'
    )
    _runs(tmp_path / "rows.cuh")
    assert not [d for d in parse_file(tmp_path / "rows.cuh").diagnostics if d.code == "C2N1008"]


@pytest.mark.parametrize(
    ("condition", "macros"),
    [
        ("defined(USE_GPU)", (("USE_GPU", "1"),)),
        ("defined USE_GPU && !defined(NO_TILES)", (("USE_GPU", "1"),)),
        ("((MODE >= 2) && FAST)", (("MODE", "2"), ("FAST", "1"))),
        ("LEVEL > 7u", (("LEVEL", "8"),)),
        ("A || (B && C)", (("A", "1"),)),
        ("(B && C) || A", (("B", "1"), ("C", "1"))),
        ("!GPU", ()),
        ("0", ()),
        ("VERSION < 3", ()),
    ],
)
def test_macros_that_make_a_condition_hold(condition: str, macros: tuple) -> None:
    assert macros_for(condition) == macros


def test_guarded_includes_follow_the_branches() -> None:
    text = (
        "#ifndef GUARD_H\n#define GUARD_H\n"
        '#include "always.h"\n'
        "#if defined(A) && \\\n    B == 2 // two lines\n"
        '#include "ab.h"\n'
        '#elif C\n#include "c.h"\n'
        "#else\n#include <other.h>\n#endif\n"
        "#endif\n"
    )
    got = {g.written: [c.text for c in g.conditions] for g in guarded_includes(text)}
    assert got == {
        "always.h": [None],
        "ab.h": [None, "defined(A) &&      B == 2"],
        "c.h": [None, "C"],
        "other.h": [None, None],
    }


# -------------------------------------------------------------- includers several levels up

ENGINE = """#pragma once
#define LANES_PER_ROW 4
typedef float real_t;
__device__ real_t bump(real_t v) { return v * 3.0f; }
#include "ops/kernels/rows.cu"
"""


def _deep(tmp_path: Path) -> Path:
    """app/main.cu includes app/engine.h, which includes app/ops/kernels/rows.cu."""
    kernels = tmp_path / "app" / "ops" / "kernels"
    kernels.mkdir(parents=True)
    (kernels / "rows.cu").write_text(KERNEL)
    (tmp_path / "app" / "engine.h").write_text(ENGINE)
    (tmp_path / "app" / "main.cu").write_text('#include "engine.h"\n' + LAUNCH)
    return kernels / "rows.cu"


def test_an_includer_two_folders_up_in_the_migrated_tree(tmp_path: Path) -> None:
    path = _deep(tmp_path)
    with searching_tree(tmp_path):
        _runs(path)


def test_an_includer_two_folders_up_in_the_repository(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    _runs(_deep(tmp_path))


def test_outside_a_tree_or_repository_the_search_stays_near(tmp_path: Path) -> None:
    tu = parse_file(_deep(tmp_path))
    assert "offset_rows" in tu.rejected
