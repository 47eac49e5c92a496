"""``migrate`` with no options on a tree whose shared header lives beside the migrated folder (a
benchmark suite's ``utilities/``, reached through a Makefile's ``-I``): the header is found, the
kernels port and check, and the report says where the header came from; a header found nowhere is
a C2N1004 warning in every report format, whether included with quotes or angle brackets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.frontend.headers import clear_cache

#: the shared header: sizes and a loop-bound macro the kernels call
BENCH_H = """\
#ifndef BENCH_H
#define BENCH_H
#define BOUND(x, n) ((x) < (n))
#define ROWS 96
#define COLS 40
typedef float real_t;
#endif
"""

#: a kernel that only compiles with the header, launched from host code with its sizes
SCALE_CU = """\
#include <stdio.h>
#include {spelled}

__global__ void scale_kernel(real_t* out, const real_t* in, real_t s, int rows, int cols) {{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (BOUND(r, rows) && BOUND(c, cols)) out[r * cols + c] = s * in[r * cols + c];
}}

void run(real_t* out, const real_t* in) {{
    dim3 block(32, 8);
    dim3 grid((COLS + 31) / 32, (ROWS + 7) / 8);
    scale_kernel<<<grid, block>>>(out, in, 1.5f, ROWS, COLS);
}}
"""


@pytest.fixture(autouse=True)
def _fresh_indexes():
    clear_cache()
    yield
    clear_cache()


def _suite(tmp_path: Path, spelled: str, repo: bool, header: str = "utilities/bench.h") -> Path:
    """``suite/{CUDA/kernels/scale/scale.cu, <header>}``; the migrated tree is ``suite/CUDA``."""
    suite = tmp_path / "suite"
    cu = suite / "CUDA/kernels/scale/scale.cu"
    cu.parent.mkdir(parents=True)
    cu.write_text(SCALE_CU.format(spelled=spelled))
    (suite / header).parent.mkdir(parents=True, exist_ok=True)
    (suite / header).write_text(BENCH_H)
    if repo:
        (suite / ".git").mkdir()
    return suite / "CUDA"


def _record(out: Path) -> dict:
    (rec,) = json.loads((out / "report.json").read_text())["kernels"]
    return rec


@pytest.mark.parametrize(
    ("spelled", "repo", "header"),
    [
        ("<bench.h>", True, "common/bench.h"),  # beside the migrated folder, in the repository
        ('"bench.h"', True, "common/bench.h"),
        ('"../common/bench.h"', True, "common/bench.h"),  # a relative spelling, off by one
        ("<bench.h>", False, "CUDA/utilities/bench.h"),  # no repository: in the migrated tree
    ],
)
def test_a_header_beside_the_sources_is_found_without_options(tmp_path, spelled, repo, header):
    src = _suite(tmp_path, spelled, repo, header)
    buckets = {}
    for mode in ("examine", "port"):
        out = tmp_path / mode
        migrate(MigrateOptions(src, out, mode=mode, check=mode == "port"))
        rec = _record(out)
        buckets[mode] = rec["status"]
        ids = [d["id"] for d in rec["diagnostics"]]
        assert "C2N1005" in ids and "C2N1004" not in ids and "C2N1021" not in ids, ids
        found = next(d for d in rec["diagnostics"] if d["id"] == "C2N1005")
        assert header in found["message"] and (found["line"], found["col"]) == (2, 11)
    assert buckets == {"examine": "automatic", "port": "automatic"}
    rec = _record(tmp_path / "port")
    assert rec["verdict"] == "pass" and rec["numerics"] == "pass"


@pytest.mark.parametrize("spelled", ["<bench.h>", '"bench.h"'])
def test_a_header_found_nowhere_is_in_every_report(tmp_path, spelled):
    src = _suite(tmp_path, spelled, repo=False, header="elsewhere/bench.h")
    for mode in ("examine", "port"):
        out = tmp_path / mode
        migrate(MigrateOptions(src, out, mode=mode))
        rec = _record(out)
        assert rec["status"] == "refused", mode
        missing = [d for d in rec["diagnostics"] if d["id"] == "C2N1004"]
        assert [(d["line"], d["col"]) for d in missing] == [(2, 11)], mode
        assert "bench.h" in missing[0]["message"]
        for name in ("report.csv", "report.html"):
            assert "C2N1004" in (out / name).read_text(), (mode, name)
