"""Migration reports: the census stays deterministic, the times live apart and are still shown."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from bench.corpus_gen import generate
from cuda2nki.batch.migrate import MigrateOptions, migrate, run_timing
from cuda2nki.report import migration as render

RECORDS = [
    {
        "file": "a.cu",
        "kernel": "k1",
        "status": "automatic",
        "idiom": "map",
        "port": "a/k1.py",
        "lines": 7,
        "diagnostics": [],
        "blocking": [],
    },
    {
        "file": "a.cu",
        "kernel": "k2",
        "status": "literal",
        "idiom": None,
        "port": "a/k2.py",
        "lines": 5,
        "diagnostics": [{"id": "C2N2001", "severity": "warning", "line": 3, "message": "m"}],
        "blocking": [],
    },
    {
        "file": "b.cu",
        "kernel": "",
        "status": "failed",
        "idiom": None,
        "port": None,
        "lines": 0,
        "diagnostics": [{"id": "C2N0006", "severity": "error", "line": 0, "message": "timeout"}],
        "blocking": ["C2N0006"],
    },
]
TIMES = run_timing(
    {
        "a.cu": {"seconds": 0.5, "kernels": {"k1": 0.125, "k2": 0.25}, "cached": True},
        "b.cu": {"seconds": 60.0, "kernels": {}, "cached": False},
    },
    61.0,
    computed=1,
    cached=1,
)


def _report() -> dict:
    from cuda2nki.batch.migrate import build_report

    return build_report(RECORDS, MigrateOptions(Path("in"), Path("out")))


def test_run_timing_adds_up_files_and_the_cached_share() -> None:
    assert TIMES["compute_seconds"] == 60.5
    assert TIMES["cached_compute_seconds"] == 0.5
    assert TIMES["wall_seconds"] == 61.0
    assert list(TIMES["per_file"]) == ["a.cu", "b.cu"]


def test_csv_has_the_time_of_each_kernel_and_of_a_failed_file() -> None:
    rows = list(csv.DictReader(render.to_csv(RECORDS, TIMES).splitlines()))
    assert [r["seconds"] for r in rows] == ["0.1250", "0.2500", "60.0000"]
    untimed = list(csv.DictReader(render.to_csv(RECORDS).splitlines()))
    assert [r["seconds"] for r in untimed] == ["", "", ""]


def test_html_totals_per_file_and_overall_with_lines_and_time() -> None:
    page = render.to_html(_report(), TIMES)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # self-contained
    files = page[page.index('id="files"') :]
    a_row = re.search(r"<tr><td>a\.cu</td>(.*?)</tr>", files).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", a_row)
    # kernels, lines, automatic, literal, manual, refused, failed, recognised, literal, time
    assert cells == ["2", "12", "1", "1", "0", "0", "0", "50.0%", "50.0%", "0.500 (cached)"]
    total = re.search(r"<tfoot><tr>(.*?)</tr></tfoot>", files).group(1)
    assert re.findall(r"<th>(.*?)</th>", total) == [
        "total", "3", "12", "1", "1", "0", "0", "1", "33.3%", "33.3%", "60.500"
    ]  # fmt: skip
    summary = page[page.index('id="summary"') : page.index("<h2>Kernels")]
    assert "<th>lines</th><td>12</td>" in summary
    assert "worker time, all files (s)</th><td>60.500" in summary
    assert "computed by an earlier run: 1)" in summary
    assert "wall time of this run (s)</th><td>61.000" in summary
    kernels = page[page.index('id="kernels"') : page.index('id="files"')]
    assert "<td>0.125</td>" in kernels and "<td>60.000</td>" in kernels


def test_a_migration_keeps_time_out_of_report_json_and_shows_it_elsewhere(
    tmp_path: Path,
) -> None:
    src = tmp_path / "src"
    generate(src, 6, seed=2, broken_every=0, kinds=("elementwise", "matmul"))
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out))
    text = (out / "report.json").read_text()
    assert "seconds" not in text
    times = json.loads((out / "timing.json").read_text())
    assert times["files_computed"] == 6 and times["files_cached"] == 0
    assert all(t["seconds"] > 0 and t["kernels"] for t in times["per_file"].values())
    rows = list(csv.DictReader((out / "report.csv").read_text().splitlines()))
    assert all(float(r["seconds"]) > 0 for r in rows)
    second = migrate(MigrateOptions(src, out))
    assert second.computed == 0 and (out / "report.json").read_text() == text
    again = json.loads((out / "timing.json").read_text())
    assert again["compute_seconds"] == times["compute_seconds"]
    assert again["cached_compute_seconds"] == times["compute_seconds"]
    assert (out / "report.html").read_text().count("(cached)") == 6


def test_html_folds_diagnostics_and_offers_filters_and_a_chart() -> None:
    page = render.to_html(_report(), TIMES)
    kernels = page[page.index('id="kernels"') : page.index('id="files"')]
    # k2's warning folds under a one-line count; the failed file's error likewise
    assert "<details><summary>1 warning: C2N2001</summary>" in kernels
    assert "<details><summary>1 error: C2N0006</summary>" in kernels
    assert kernels.count("<details>") == 2  # k1 has no diagnostics: nothing to fold
    assert 'data-status="literal"' in kernels and 'data-status="failed"' in kernels
    options = re.findall(r'<option value="([^"]*)">([^<]*)</option>', page)
    assert options == [
        ("", "all outcomes (3)"),
        ("status:automatic", "automatic (1)"),
        ("status:literal", "literal (1)"),
        ("status:failed", "failed (1)"),
    ]
    assert 'id="filter-text"' in page and "addEventListener('input'" in page
    chart = page[page.index('id="status-chart"') : page.index("</figure>")]
    assert chart.count("<rect ") == 5 and 'class="axis x"' in chart and 'class="axis y"' in chart
    assert "<th>verdict</th>" not in page  # no check ran: no check columns


def test_diagnostics_summary_counts_by_severity_worst_first() -> None:
    diags = [
        {"id": "C2N2001", "severity": "note"},
        {"id": "C2N2505", "severity": "note"},
        {"id": "C2N2300", "severity": "warning"},
        {"id": "C2N2513", "severity": "note"},
        {"id": "C2N2509", "severity": "note"},
        {"id": "C2N2509", "severity": "note"},
    ]
    assert render.diagnostics_summary(diags) == "1 warning, 5 notes: C2N2300, C2N2001, C2N2505 +2"
    assert render.diagnostics_summary([]) == ""
