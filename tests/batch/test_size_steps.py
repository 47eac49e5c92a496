"""Check sizes the host's grid covers (cuda2nki.frontend.sizesteps): a host that truncates its
grid (``M / 256``, ``(size_t)(ceil((float)M) / 256.0f)``) launches every element only at
multiples of its step, so the check's ragged value is raised to such a multiple."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.frontend.sizemacros import check_values, size_macros
from cuda2nki.frontend.sizesteps import covered_values

# a column scaling of a ROWS x COLS matrix; {grid} and {block} are the host's launch geometry
SCALE = """\
#define ROWS 2048
#define COLS 4096
#define BX 32
#define BY 8
__global__ void scale_cols(const float* w, float* a)
{{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < ROWS && c < COLS) a[r * COLS + c] = w[c] * a[r * COLS + c];
}}
void launch(const float* w, float* a)
{{
    dim3 block({block});
    dim3 grid({grid});
    scale_cols<<<grid, block>>>(w, a);
}}
int main()
{{
    float *w, *a;
    cudaMalloc(&w, COLS * sizeof(float));
    cudaMalloc(&a, ROWS * COLS * sizeof(float));
    launch(w, a);
    return 0;
}}
"""

TRUNCATING = {
    "int-division": ("BX, BY", "COLS / BX, ROWS / BY"),
    "float-ceil-of-size": (
        "BX, BY",
        "(size_t)(ceil((float)COLS) / ((float)BX)), (size_t)(ceil((float)ROWS) / ((float)BY))",
    ),
    "literal-block": ("32, 8", "(unsigned)(COLS / 32), (unsigned)(ROWS / 8)"),
}


def _values(tmp_path: Path, block: str, grid: str) -> tuple[dict[str, str], dict[str, str]]:
    src = tmp_path / "s.cu"
    src.write_text(SCALE.format(block=block, grid=grid))
    text = src.read_text()
    small = check_values(size_macros(str(src), text), str(src), text)
    return small, covered_values(small, str(src), text)


@pytest.mark.parametrize("spelling", sorted(TRUNCATING))
def test_truncated_grid_gets_multiples_of_its_step(tmp_path: Path, spelling: str) -> None:
    small, got = _values(tmp_path, *TRUNCATING[spelling])
    assert small == {"COLS": "131", "ROWS": "141"}
    # the grid covers COLS at multiples of 32 and ROWS at multiples of 8
    assert got == {"COLS": "160", "ROWS": "144"}


def test_a_rounded_up_axis_keeps_its_ragged_value(tmp_path: Path) -> None:
    # ROWS is launched with a rounded-up grid (a ragged tail is covered); COLS is truncated
    small, got = _values(tmp_path, "BX, BY", "COLS / BX, (ROWS + BY - 1) / BY")
    assert got == {"COLS": "160", "ROWS": "141"}


def test_raised_values_stay_distinct(tmp_path: Path) -> None:
    # both sizes step by 64: 131 and 141 both round to 192, so the second takes the next one
    small, got = _values(tmp_path, "64, 1", "COLS / 64, ROWS / 64")
    assert got == {"COLS": "192", "ROWS": "256"}


def test_a_grid_of_zero_blocks_is_raised(tmp_path: Path) -> None:
    # at 131 a grid of COLS / 256 blocks is 0 blocks: nothing would run
    small, got = _values(tmp_path, "256, 1", "COLS / 256, (ROWS + 0) / 1")
    assert got == {"COLS": "256", "ROWS": "141"}


def test_migrate_checks_a_truncating_host_at_covered_sizes(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "s.cu").write_text(SCALE.format(block="BX, BY", grid="COLS / BX, ROWS / BY"))
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True, timeout=600))
    (rec,) = json.loads((out / "report.json").read_text())["kernels"]
    assert rec["verdict"] == "pass", rec
    (note,) = [d["message"] for d in rec["diagnostics"] if d["id"] == "C2N4032"]
    assert "-D COLS=160" in note and "-D ROWS=144" in note


def _report(findings: list) -> object:
    from cuda2nki.fidelity.check import CheckReport

    ok = {"output": "y", "classification": "expected"}
    return CheckReport("k.cu", "p.py", "k", "k", "nki", "fail", [ok], findings, "ir")


def test_migrate_checks_at_chosen_sizes_note_size_bound_findings(monkeypatch) -> None:
    from cuda2nki import api
    from cuda2nki.batch import job
    from cuda2nki.diagnostics import Diagnostic, Severity

    small_dmas = Diagnostic("C2N5007", Severity.WARNING, "DMAs of 64 B per partition")
    reloads = Diagnostic("C2N5006", Severity.WARNING, "the same region loaded 4 times")
    spec = job.JobSpec("k.cu", "k.cu", "out", "port", check=True)
    for findings, verdict, ids in (
        ([small_dmas], "pass", []),  # its figure follows the size the check chose
        ([small_dmas, reloads], "fail", ["C2N5006"]),  # a reload is one at any size
    ):
        monkeypatch.setattr(api, "check", lambda *a, f=findings, **k: _report(f))
        got = job._check(spec, Path("p.py"), None, "k", sizes={"N": "131"})
        assert (got["verdict"], got["check_ids"]) == (verdict, ids)
        # at the source's own sizes the finding keeps its severity
        assert job._check(spec, Path("p.py"), None, "k")["verdict"] == "fail"
