"""The load test of the migration: >= 2,000 generated kernels with two jobs, faults injected,
kill -9 and resume.  Slow tier (minutes): ``pytest -m slow tests/batch -k two_thousand``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bench.corpus_gen import generate
from cuda2nki.batch.migrate import MigrateOptions, migrate
from tests.batch.faults import (
    MACRO_BOMB,
    add_check_faults,
    add_file_faults,
    csv_without_time,
    kill_after,
)

COUNT = 2000
FILE_FAULTS = {"not_text.cu", "dangling.cu", "loop.cu", "bomb.cu"}
CHECK_FAULTS = {"hang.cu", "hog.cu"}


def _corpus(src: Path, elsewhere: Path) -> set[str]:
    """The generated corpus plus every injected fault; returns the broken generated files."""
    generate(src, COUNT, seed=11, broken_every=40)
    broken = {
        p.relative_to(src).as_posix()
        for p in src.rglob("*.cu")
        if not p.with_suffix(".toml").exists()
    }
    add_file_faults(src, elsewhere)
    (src / "bomb.cu").write_text(MACRO_BOMB)
    add_check_faults(src)
    return broken


def _all_files(src: Path) -> set[str]:
    return {p.relative_to(src).as_posix() for p in src.rglob("*.cu")}


def _differences(got: list[dict], want: list[dict]) -> list[str]:
    """The kernels whose records differ, with their status and diagnostic ids (for the message)."""

    def brief(r: dict | None) -> str:
        if r is None:
            return "missing"
        return f"{r['status']} {sorted({d['id'] for d in r['diagnostics']})}"

    a = {(r["file"], r["kernel"]): r for r in got}
    b = {(r["file"], r["kernel"]): r for r in want}
    return [
        f"{k}: {brief(a.get(k))} (uninterrupted: {brief(b.get(k))})"
        for k in sorted(a.keys() | b.keys())
        if a.get(k) != b.get(k)
    ]


@pytest.mark.slow
def test_two_thousand_kernels_with_injected_faults(tmp_path: Path) -> None:
    src = tmp_path / "src"
    broken = _corpus(src, tmp_path)
    assert len(broken) == COUNT // 40
    started = time.monotonic()

    # 1. an uninterrupted run with two jobs: every file is reported, only the faults fail
    ref = migrate(MigrateOptions(src, tmp_path / "ref", jobs=2))
    t_ref = time.monotonic() - started
    s = ref.report["summary"]
    assert s["kernels"] >= COUNT + len(FILE_FAULTS)
    assert {r["file"] for r in ref.records} == _all_files(src)
    failed = {r["file"] for r in ref.records if r["status"] == "failed"}
    assert failed == FILE_FAULTS, failed
    by_file: dict[str, list[dict]] = {}
    for r in ref.records:
        by_file.setdefault(r["file"], []).append(r)
    assert by_file["bomb.cu"][0]["blocking"], by_file["bomb.cu"]  # said why, no traceback
    for rel in broken:
        assert {r["status"] for r in by_file[rel]} <= {"refused", "manual"}, by_file[rel]
    for rel, recs in by_file.items():
        if rel in broken or rel in FILE_FAULTS:
            continue
        for r in recs:  # a generated kernel: a port, or a refusal with its reason
            assert r["status"] in ("automatic", "literal", "manual"), r
            assert r["port"] or r["blocking"], r
            if r["port"]:
                assert (tmp_path / "ref" / r["port"]).is_file()
    assert s["automatic"] >= 0.9 * (COUNT - len(broken))

    # 2. the same run killed with -9 after 500 files and resumed gives the same report
    out = tmp_path / "out"
    kill_after(src, out, files=500, jobs=2)
    assert not (out / "report.json").exists()
    resumed = migrate(MigrateOptions(src, out, jobs=2))
    assert resumed.cached >= 500 and resumed.computed > 0
    assert _differences(resumed.records, ref.records) == []
    assert (out / "report.json").read_text() == (tmp_path / "ref" / "report.json").read_text()
    assert csv_without_time(out / "report.csv") == csv_without_time(tmp_path / "ref" / "report.csv")

    # 3. --check over part of the tree: a hang and a memory hog under check are isolated
    chk = migrate(
        MigrateOptions(
            src,
            tmp_path / "chk",
            jobs=2,
            check=True,
            include=("hang.cu", "hog.cu", "part000/k0000[0-5]_*.cu"),
            timeout=20,
            memory_mb=4096,
        )
    )
    checked = {r["file"]: r for r in chk.records}
    assert checked["hang.cu"]["failure"] == "timeout", checked["hang.cu"]
    assert checked["hog.cu"]["failure"] in ("memory", "crash"), checked["hog.cu"]
    others = [r for f, r in checked.items() if f not in CHECK_FAULTS]
    assert len(others) == 6
    assert all(r["status"] != "failed" for r in others), others
    assert all(r.get("verdict") for r in others if r["port"]), others

    times = json.loads((tmp_path / "ref" / "timing.json").read_text())
    print(
        f"\n2,000-kernel run: {s['kernels']} kernels, uninterrupted {t_ref:.0f} s "
        f"({times['compute_seconds']:.0f} s of worker time); whole test "
        f"{time.monotonic() - started:.0f} s"
    )
