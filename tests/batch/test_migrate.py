"""``cuda2nki migrate`` end to end on small trees: census, ports, faults, cache and resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.corpus_gen import generate
from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.cli.main import main
from tests.batch.faults import add_check_faults, add_file_faults, csv_without_time, kill_after

#: kernels quick to port (the shared-memory reductions take the lifter ~0.2-1 s each)
QUICK = ("elementwise", "matmul")


def _tree(tmp_path: Path, count: int = 30, kinds: tuple[str, ...] | None = QUICK) -> Path:
    src = tmp_path / "src"
    generate(src, count, seed=1, broken_every=10, kinds=kinds)
    return src


def _snapshot(d: Path) -> dict[str, bytes]:
    return {
        p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()
    }


def test_migrate_ports_every_kernel_and_never_touches_input(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    before = _snapshot(src)
    out = tmp_path / "out"
    res = migrate(MigrateOptions(src, out, jobs=2))
    assert _snapshot(src) == before
    s = res.report["summary"]
    assert s["kernels"] == 30
    assert s["refused"] + s["failed"] + s["manual"] >= 3  # the broken files
    assert s["automatic"] + s["literal"] >= 20
    for r in res.records:
        if r["port"]:
            text = (out / r["port"]).read_text()
            assert "def " in text and "nki" in text
        if r["status"] == "refused":
            assert r["blocking"] and all(i.startswith("C2N1") for i in r["blocking"])
    for name in ("report.json", "report.csv", "report.html"):
        assert (out / name).stat().st_size > 0
    csv_rows = (out / "report.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + len(res.records)


def test_examine_writes_no_ports_and_buckets_kernels(tmp_path: Path) -> None:
    src = _tree(tmp_path, 12, kinds=None)  # every idiom of the generator
    out = tmp_path / "census"
    res = migrate(MigrateOptions(src, out, mode="examine"))
    assert not list(out.rglob("*.py"))
    statuses = {r["status"] for r in res.records}
    assert statuses <= {"automatic", "literal", "manual", "refused", "failed"}
    assert res.report["summary"]["automatic"] > 0
    assert any(r["idiom"] for r in res.records)


def test_faults_are_reported_and_the_rest_carries_on(tmp_path: Path) -> None:
    src = _tree(tmp_path, 8)
    add_file_faults(src, tmp_path)
    res = migrate(MigrateOptions(src, tmp_path / "out", jobs=2, timeout=30))
    by_file = {r["file"]: r for r in res.records}
    assert by_file["not_text.cu"]["status"] == "failed"
    assert "not text" in by_file["not_text.cu"]["diagnostics"][0]["message"]
    assert by_file["dangling.cu"]["status"] == "failed"
    assert by_file["loop.cu"]["status"] == "failed"
    assert sum(1 for r in res.records if r["status"] in ("automatic", "literal")) >= 5


def test_output_inside_input_is_refused(tmp_path: Path, capsys) -> None:
    src = _tree(tmp_path, 2)
    assert main(["migrate", str(src), "-o", str(src / "out"), "-q"]) == 2
    assert "C2N0002" in capsys.readouterr().err


def test_rerun_uses_the_cache(tmp_path: Path) -> None:
    src = _tree(tmp_path, 10)
    out = tmp_path / "out"
    first = migrate(MigrateOptions(src, out))
    second = migrate(MigrateOptions(src, out))
    assert second.computed == 0 and second.cached == first.computed
    assert second.report == first.report
    # a changed file is redone, the rest is not
    victim = next(src.rglob("*.cu"))
    victim.write_text(victim.read_text() + "\n// edited\n")
    third = migrate(MigrateOptions(src, out))
    assert third.computed == 1


def test_kill_and_resume_gives_the_same_report(tmp_path: Path) -> None:
    src = tmp_path / "src"
    generate(src, 120, seed=7, broken_every=15, kinds=QUICK)
    migrate(MigrateOptions(src, tmp_path / "ref", jobs=1))
    out = tmp_path / "out"
    kill_after(src, out, files=10, jobs=1, limit_s=60)
    resumed = migrate(MigrateOptions(src, out, jobs=2))
    assert resumed.cached >= 10 and resumed.computed > 0
    assert json.loads((out / "report.json").read_text()) == json.loads(
        (tmp_path / "ref" / "report.json").read_text()
    )
    assert csv_without_time(out / "report.csv") == csv_without_time(tmp_path / "ref" / "report.csv")
    # the time of every file is still reported: the files of the killed run from the cache
    times = json.loads((out / "timing.json").read_text())
    assert set(times["per_file"]) == {r["file"] for r in resumed.records}
    assert times["files_cached"] == resumed.cached and times["cached_compute_seconds"] > 0


@pytest.mark.skipif(pytest.importorskip("distributed") is None, reason="needs distributed")
def test_dask_executor_matches_local(tmp_path: Path) -> None:
    src = _tree(tmp_path, 20)  # chunks of 2 files per Dask task
    local = migrate(MigrateOptions(src, tmp_path / "local", jobs=2))
    dask = migrate(MigrateOptions(src, tmp_path / "dask", jobs=2, executor="dask"))
    assert dask.report == local.report


@pytest.mark.slow  # waits out an 8 s timeout; the load test (test_load.py) covers it too
def test_check_faults_hang_and_memory_are_isolated(tmp_path: Path) -> None:
    src = _tree(tmp_path, 4)
    add_check_faults(src)
    res = migrate(
        MigrateOptions(src, tmp_path / "out", jobs=2, check=True, timeout=8, memory_mb=4096)
    )
    by_file = {r["file"]: r for r in res.records}
    # each was ported before its check was stopped: the port and its bucket are kept, the
    # check is unverified for C2N0006
    hang, hog = by_file["hang.cu"], by_file["hog.cu"]
    assert hang["status"] == "automatic", hang  # its check ends at its own time limit
    assert hog["status"] == "automatic" and hog["failure"] in ("memory", "crash"), hog
    for r in (hang, hog):
        assert r["verdict"] == "unverified" and r["check_ids"] == ["C2N0006"], r
    checked = [r for r in res.records if r.get("verdict")]
    assert checked and all(r["verdict"] in ("pass", "fail", "error") for r in checked)


def test_dask_chunks_keep_every_file_in_order() -> None:
    from cuda2nki.batch.cluster import chunks

    todo = [(str(i), i) for i in range(100)]
    got = chunks(todo, 2)  # type: ignore[arg-type]
    assert [t for c in got for t in c] == todo
    assert max(len(c) for c in got) == 12 and len(got) == 9
    assert chunks(todo[:3], 4) == [[t] for t in todo[:3]]  # type: ignore[arg-type]
    assert len(max(chunks([(str(i), i) for i in range(10_000)], 2), key=len)) == 32  # type: ignore[arg-type]


LAST_HEAD = """
__global__ void scale_and_mark(const float* x, float* y, float* last, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
    if (threadIdx.x == 0) last[0] = x[blockIdx.x * blockDim.x];
}
void go(const float* x, float* y, int n) {
    float* flag;
    cudaMalloc(&flag, sizeof(float));
    scale_and_mark<<<(n + 127) / 128, 128>>>(x, y, flag, n);
}
"""


def test_a_checked_migration_says_what_failed_a_verdict(tmp_path: Path) -> None:
    """A failed verdict with passing numerics names the findings that failed it, in the records,
    the CSV, the HTML page and the summary."""
    import csv
    import shutil

    root = Path(__file__).resolve().parents[2] / "corpus"
    src = tmp_path / "src"
    src.mkdir()
    for ext in (".cu", ".toml"):  # clean
        shutil.copy(root / ("basic/vector_add" + ext), src / ("vector_add" + ext))
    # a port with a performance finding only: no recogniser claims a kernel whose every block
    # writes the same flag, and the literal port reloads x in its block loop (C2N5006)
    flawed_cu = "last_head.cu"
    (src / flawed_cu).write_text(LAST_HEAD)
    out = tmp_path / "out"
    res = migrate(MigrateOptions(src, out, jobs=1, check=True))
    by_file = {r["file"]: r for r in res.records}
    good, flawed = by_file["vector_add.cu"], by_file[flawed_cu]
    assert (good["verdict"], good["numerics"], good["check_ids"]) == ("pass", "pass", [])
    assert (flawed["verdict"], flawed["numerics"]) == ("fail", "pass")
    # performance findings only
    assert flawed["check_ids"] and all(i.startswith("C2N5") for i in flawed["check_ids"]), flawed
    assert res.report["summary"]["verdicts"] == {"fail": 1, "pass": 1}
    assert res.report["summary"]["numerics"] == {"pass": 2}
    rows = {r["file"]: r for r in csv.DictReader((out / "report.csv").open())}
    assert rows[flawed_cu]["numerics"] == "pass"
    assert rows[flawed_cu]["check_ids"] == " ".join(flawed["check_ids"])
    assert rows["vector_add.cu"]["check_ids"] == ""
    page = (out / "report.html").read_text()
    assert "check numerics" in page and "<th>check findings</th>" in page
    assert all(i in page for i in flawed["check_ids"])
