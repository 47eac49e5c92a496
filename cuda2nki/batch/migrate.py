"""``cuda2nki migrate``: port (or examine) every kernel of a tree, isolated, cached and resumable.

Results are cached per file under ``OUT/.cuda2nki/cache/<key>.json``, where the key hashes the
tool version, the file's bytes, its sidecar binding and the options; the entry names, with their
digests, the other files the result was computed from (the headers it includes, the files whose
device functions were linked in, the files including it whose launches bind its kernels), and is
used only while they are unchanged (see :mod:`cuda2nki.frontend.deps`).  A cache entry is written only
after the file's ports are on disk, so a run killed at any point (even ``kill -9``) resumes where it
stopped, and the final report of a resumed run equals that of an uninterrupted one (timings live
apart, in ``timing.json``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuda2nki import __version__
from cuda2nki.batch.discover import CompileFlags, SourceFile, discover
from cuda2nki.batch.instances import by_definition
from cuda2nki.batch.job import (
    BUCKETS,
    FileResult,
    JobSpec,
    journal_deps,
    process_file,
    read_journal,
    record,
    warm_up,
)
from cuda2nki.batch.pool import Outcome, run_tasks
from cuda2nki.diagnostics import SourceLoc, error, make
from cuda2nki.fileio import read_regular, write_atomic
from cuda2nki.frontend.deps import digests, unchanged

CACHE_DIR = ".cuda2nki/cache"
#: where a worker journals each kernel's record of the file it works on (see ``job.Journal``)
JOURNAL_DIR = ".cuda2nki/journal"


@dataclass(frozen=True)
class MigrateOptions:
    in_dir: Path
    out_dir: Path
    jobs: int = 1
    mode: str = "port"  # "port" | "examine"
    check: bool = False
    target: str = "nki"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    defines: dict[str, str] = field(default_factory=dict)
    include_dirs: tuple[str, ...] = ()
    compile_db: dict[str, CompileFlags] | None = None
    executor: str = "local"  # "local" | "dask"
    scheduler: str | None = None  # dask scheduler address; None starts a local cluster
    timeout: float = 60.0
    memory_mb: int | None = 2048


@dataclass
class MigrateSummary:
    records: list[dict[str, Any]]
    report: dict[str, Any]
    cached: int
    computed: int
    seconds: float


# bumped whenever a cached record's fields change (2: checked kernels record numerics and
# check_ids; 3: a record holds the file's diagnostics that concern its kernel and none about
# other kernels, and a sidecar binds only the kernels it names; 4: diagnostics carry their
# column and notes; 5: a stopped file keeps its finished kernels' records; 6: a header's
# kernels are counted in the header only; 7: a kernel-less file leaves out the errors of the
# headers counted on their own, and a header takes its includers' template instantiations; 8:
# a template kernel is one record listing its instantiations, and a port's record says where
# its binding came from, the inference's notes among its diagnostics; 9: headers missing from
# the include path are looked for in the tree, and a missing <...> include is reported; 10: an
# entry lists the files its records depend on), so that a resumed run never mixes records of
# two shapes
RECORD_FORMAT = 10


def _key(spec: JobSpec, sf: SourceFile) -> str:
    h = hashlib.sha256()
    h.update(f"cuda2nki {__version__} records {RECORD_FORMAT}\0".encode())
    for part in (
        spec.mode,
        spec.target,
        str(spec.check),
        repr(spec.defines),
        repr(spec.include_dirs),
        spec.rel,
    ):
        h.update(part.encode() + b"\0")
    for p in (sf.path, sf.binding):
        if p is None:
            continue
        try:
            h.update(read_regular(Path(p)))
        except OSError as exc:  # unreadable: key on the error so the record is still cached
            h.update(f"unreadable:{exc.errno}".encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _check_dirs(opts: MigrateOptions) -> None:
    if not opts.in_dir.is_dir():
        raise error(
            "C2N0001",
            SourceLoc(str(opts.in_dir), 0, 0),
            path=str(opts.in_dir),
            reason="not a directory",
        )
    i, o = Path(os.path.realpath(opts.in_dir)), Path(os.path.realpath(opts.out_dir))
    if o == i or i in o.parents:
        raise error(
            "C2N0002",
            option="-o",
            reason=f"the output directory {o} is inside the input tree {i}; "
            "migrate never writes inside its input",
        )


def plan(opts: MigrateOptions) -> list[tuple[str, JobSpec, SourceFile]]:
    files = discover(
        opts.in_dir,
        include=opts.include,
        exclude=opts.exclude,
        skip=[opts.out_dir],
        defines=opts.defines,
        include_dirs=opts.include_dirs,
        compile_db=opts.compile_db,
    )
    out = []
    for sf in files:
        spec = JobSpec(
            str(sf.path),
            sf.rel,
            str(opts.out_dir),
            opts.mode,
            opts.target,
            opts.check,
            sf.defines,
            sf.include_dirs,
            str(sf.binding) if sf.binding else None,
            time_limit(opts, sf.path, sf.include_dirs),
        )
        key = _key(spec, sf)
        journal = opts.out_dir / JOURNAL_DIR / f"{key}.jsonl"
        spec = dataclasses.replace(
            spec,
            journal=str(journal),
            root=str(opts.in_dir),
            include=tuple(opts.include),
            exclude=tuple(opts.exclude),
        )
        out.append((key, spec, sf))
    return out


def time_limit(opts: MigrateOptions, path: Path, include_dirs: Sequence[str] = ()) -> float:
    """A file's time limit: ``--timeout`` for each kernel the file defines, whether it is only
    ported (or examined) or also checked, so a file of six kernels is not given the time of one
    and ``--examine`` stops a file exactly when the real run would.  The kernels are counted in
    the text, cheaply, before any parsing, with those of the files it includes that are not
    migrated on their own (see :mod:`.kernelcount`)."""
    from cuda2nki.batch.discover import selected
    from cuda2nki.batch.kernelcount import count_kernels

    def listed(p: Path) -> bool:
        return selected(opts.in_dir, p, opts.include, opts.exclude)

    kernels = count_kernels(path, read_regular, listed, include_dirs)
    return opts.timeout * max(1, kernels)


def _cache_load(
    out_dir: Path, key: str, memo: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The cached records of a file and the time they took when they were computed (``memo``:
    the digests of the files they depend on, computed once per run)."""
    p = out_dir / CACHE_DIR / f"{key}.json"
    try:
        entry = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    recs = entry.get("records") if isinstance(entry, dict) else None
    if not isinstance(recs, list):
        return None
    if any(r.get("port") and not (out_dir / r["port"]).is_file() for r in recs):
        return None  # a port was removed since: redo the file
    deps = entry.get("deps")
    if not isinstance(deps, dict) or not unchanged(deps, memo):
        return None  # a file it was computed from changed since: redo the file
    timing = {
        "seconds": float(entry.get("seconds") or 0.0),
        "kernels": dict(entry.get("kernel_seconds") or {}),
        "cached": True,
    }
    return recs, timing


def _cache_store(
    out_dir: Path,
    key: str,
    records: list[dict[str, Any]],
    timing: dict[str, Any],
    deps: tuple[str, ...] = (),
    memo: dict[str, str] | None = None,
) -> None:
    entry = {
        "deps": digests(deps, memo),
        "records": records,
        "seconds": timing["seconds"],
        "kernel_seconds": timing["kernels"],
    }
    write_atomic(out_dir / CACHE_DIR / f"{key}.json", json.dumps(entry))


def _failure_records(spec: JobSpec, outcome: Outcome) -> list[dict[str, Any]]:
    diag = make("C2N0006", SourceLoc(spec.rel, 0, 0), reason=f"{outcome.status}: {outcome.reason}")
    return [{**record(spec, "", "failed", [diag], lines=0), "failure": outcome.status}]


def migrate(
    opts: MigrateOptions, progress: Callable[[int, int, int], None] | None = None
) -> MigrateSummary:
    """Run the migration; ``progress(done, failed, total)`` is called after each file."""
    _check_dirs(opts)
    t0 = time.perf_counter()
    jobs = plan(opts)
    by_key = {k: (spec, sf) for k, spec, sf in jobs}
    results: dict[str, list[dict[str, Any]]] = {}
    timing: dict[str, dict[str, Any]] = {}
    todo = []
    memo: dict[str, str] = {}  # the digests of the files results depend on, once per run
    for key, spec, _ in jobs:
        cached = _cache_load(opts.out_dir, key, memo)
        if cached is not None:
            results[key], timing[spec.rel] = cached
        else:
            todo.append((key, spec))
    cached_n = len(results)
    failed = sum(1 for recs in results.values() for r in recs if r["status"] == "failed")
    if progress:
        progress(len(results), failed, len(jobs))
    for outcome in _execute(opts, todo):
        spec = by_key[outcome.key][0]
        deps = _outcome_deps(spec, outcome)  # before the journal is dropped
        recs, kernel_secs = _outcome_records(spec, outcome)
        file_timing = {
            "seconds": round(outcome.seconds, 4),
            "kernels": {k: round(v, 4) for k, v in kernel_secs.items()},
            "cached": False,
        }
        _cache_store(opts.out_dir, outcome.key, recs, file_timing, deps, memo)
        results[outcome.key] = recs
        timing[spec.rel] = file_timing
        failed += sum(1 for r in recs if r["status"] == "failed")
        if progress:
            progress(len(results), failed, len(jobs))
    records = [r for key, _, _ in jobs for r in results[key]]
    records.sort(key=lambda r: (r["file"], r["kernel"]))
    report = build_report(records, opts)
    seconds = time.perf_counter() - t0
    times = run_timing(timing, seconds, computed=len(todo), cached=cached_n)
    from cuda2nki.report import migration as render

    write_atomic(opts.out_dir / "report.json", json.dumps(report, indent=2, sort_keys=True))
    write_atomic(opts.out_dir / "report.csv", render.to_csv(records, times))
    write_atomic(opts.out_dir / "report.html", render.to_html(report, times))
    write_atomic(opts.out_dir / "timing.json", json.dumps(times, indent=2, sort_keys=True))
    return MigrateSummary(records, report, cached_n, len(todo), seconds)


def _salvage(spec: JobSpec, outcome: Outcome) -> list[dict[str, Any]] | None:
    """The records of a file whose worker was stopped (time or memory limit, crash): those its
    journal holds, each kernel not finished by then marked failed (C2N0006).  A ported kernel
    whose check did not finish keeps its bucket, port and idiom (the bucket says what porting
    gave, as ``--examine`` does; how long a check takes depends on the machine), its verdict
    ``unverified`` for C2N0006.  None: the file was not parsed when it stopped (nothing to
    keep)."""
    if spec.journal is None:
        return None
    names, done = read_journal(spec.journal)
    if names is None:
        return None
    reason = f"{outcome.status}: {outcome.reason}"
    out = []
    for name in names:
        entry = done.get(name)
        rec = entry.record if entry is not None else None
        if entry is None:  # not decided when the file stopped
            diag = make(
                "C2N0006",
                SourceLoc(spec.rel, 0, 0),
                reason=f"kernel '{name}' unfinished when the file stopped ({reason})",
            )
            rec = {**record(spec, name, "failed", [diag], lines=0), "failure": outcome.status}
        elif not entry.final:  # ported, its check unfinished: a port all the same
            diag = make(
                "C2N0006",
                SourceLoc(spec.rel, 0, 0),
                reason=f"the check of '{name}' unfinished when the file stopped ({reason})",
            )
            rec = {
                **rec,
                "blocking": sorted({*rec["blocking"], "C2N0006"}),
                "diagnostics": [*rec["diagnostics"], _diag_entry(diag)],
                "verdict": "unverified",
                "check_ids": ["C2N0006"],
                "failure": outcome.status,
            }
        out.append(rec)
    return out


def _outcome_deps(spec: JobSpec, outcome: Outcome) -> tuple[str, ...]:
    """The other files a file's records depend on: as the worker returned them, else (a worker
    stopped) as its journal holds them."""
    if isinstance(outcome.value, FileResult):
        return outcome.value.deps
    return journal_deps(spec.journal) if spec.journal else ()


def _diag_entry(d: Any) -> dict[str, Any]:
    return record(JobSpec("", "", "", ""), "", "", [d], lines=0)["diagnostics"][0]


def _drop_journal(spec: JobSpec) -> None:
    if spec.journal is not None:
        Path(spec.journal).unlink(missing_ok=True)


def _outcome_records(spec: JobSpec, outcome: Outcome) -> tuple[list[dict[str, Any]], dict]:
    salvaged = _salvage(spec, outcome) if outcome.status != "ok" else None
    _drop_journal(spec)
    if outcome.status != "ok":
        return by_definition(salvaged or _failure_records(spec, outcome))
    value = outcome.value
    if isinstance(value, FileResult):  # a template's instantiations: one kernel, listed
        return by_definition(value.records, value.kernel_seconds)
    return by_definition(list(value))


def run_timing(
    per_file: dict[str, dict[str, Any]], wall: float, *, computed: int, cached: int
) -> dict[str, Any]:
    """Times of a run, kept out of ``report.json`` so that the report is deterministic.

    ``compute_seconds`` adds up the worker time of every file, including files taken from the
    cache (their time is the one measured when they were computed); ``wall_seconds`` is this
    run's elapsed time.
    """
    return {
        "wall_seconds": round(wall, 3),
        "compute_seconds": round(math.fsum(t["seconds"] for t in per_file.values()), 3),
        "cached_compute_seconds": round(
            math.fsum(t["seconds"] for t in per_file.values() if t["cached"]), 3
        ),
        "files_computed": computed,
        "files_cached": cached,
        "per_file": {rel: per_file[rel] for rel in sorted(per_file)},
    }


def _execute(opts: MigrateOptions, todo: list[tuple[str, JobSpec]]) -> Iterator[Outcome]:
    if opts.executor == "dask":
        from cuda2nki.batch.cluster import run_on_dask

        yield from run_on_dask(todo, opts)
    else:
        if opts.jobs > 1 and len(todo) > 1:
            warm_up()  # once here rather than in every worker
        yield from run_tasks(
            process_file,
            todo,
            jobs=opts.jobs,
            timeout=opts.timeout,
            memory_mb=opts.memory_mb,
            limits={k: spec.time_limit for k, spec in todo if spec.time_limit is not None},
        )


def build_report(records: Sequence[dict[str, Any]], opts: MigrateOptions) -> dict[str, Any]:
    """Deterministic census: per-kernel records, totals per file and overall, ids by count."""
    kernels = [r for r in records if r["kernel"] or r["status"] == "failed"]
    files: dict[str, dict[str, Any]] = {}
    for r in records:
        f = files.setdefault(
            r["file"], {"file": r["file"], "kernels": 0, "lines": 0, **{b: 0 for b in BUCKETS}}
        )
        f["lines"] += r.get("lines", 0)
        if r in kernels:
            f["kernels"] += 1
            f[r["status"]] += 1
    total = {b: sum(1 for r in kernels if r["status"] == b) for b in BUCKETS}
    n = len(kernels)
    ids: dict[str, int] = {}
    for r in kernels:
        for d in r["diagnostics"]:
            ids[d["id"]] = ids.get(d["id"], 0) + 1
    summary = {
        "files": len(files),
        "kernels": n,
        "lines": sum(f["lines"] for f in files.values()),
        **total,
        "share_recognised": round(total["automatic"] / n, 4) if n else 0.0,
        "share_literal": round(total["literal"] / n, 4) if n else 0.0,
        "share_refused": round((total["refused"] + total["manual"]) / n, 4) if n else 0.0,
        "diagnostics_by_id": dict(sorted(ids.items())),
        "idioms": dict(sorted(_count(r["idiom"] for r in kernels if r["idiom"]).items())),
    }
    if opts.check:
        summary["verdicts"] = dict(
            sorted(_count(r.get("verdict") or "unchecked" for r in kernels).items())
        )
        # a failed verdict with passing numerics failed on its findings (check_ids) alone
        summary["numerics"] = dict(
            sorted(_count(r.get("numerics") or "unchecked" for r in kernels).items())
        )
    return {
        "tool": f"cuda2nki {__version__}",
        "mode": opts.mode,
        "target": opts.target,
        "summary": summary,
        "files": [files[k] for k in sorted(files)],
        "kernels": kernels,
    }


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in items:
        out[it] = out.get(it, 0) + 1
    return out


def plain_progress(
    interval: float, stream: Any
) -> tuple[Callable[[int, int, int], None], Callable[[], None]]:
    """``migrate: 12/40 files, 1 failed, 0.8 files/s, 15 s`` every ``interval`` seconds (from a
    timer thread, so also while one long file is being worked on), and once more at the end."""
    import threading

    t0 = time.perf_counter()
    state = {"done": 0, "failed": 0, "total": 0}
    lock = threading.Lock()
    stop_event = threading.Event()

    def line() -> None:
        with lock:
            done, failed, total = state["done"], state["failed"], state["total"]
        secs = time.perf_counter() - t0
        rate = f", {done / secs:.1f} files/s" if done and secs > 0 else ""
        of = f"/{total}" if total else ""
        try:
            print(f"migrate: {done}{of} files, {failed} failed{rate}, {secs:.0f} s", file=stream)
            stream.flush()
        except (OSError, ValueError):  # a closed log: progress is not worth failing over
            pass

    def tick() -> None:
        while not stop_event.wait(interval):
            line()

    def update(done: int, failed: int, total: int) -> None:
        with lock:
            state.update(done=done, failed=failed, total=total)

    thread = threading.Thread(target=tick, name="migrate-progress", daemon=True)
    thread.start()

    def stop() -> None:
        stop_event.set()
        thread.join(timeout=5)
        if state["done"]:
            line()

    return update, stop


def progress_printer(
    enabled: bool, interval: float = 10.0, stream: Any = None
) -> tuple[Callable[[int, int, int], None] | None, Callable[[], None]]:
    """A rich progress bar on a terminal (done / failed / rate / ETA); in CI or when stderr is
    not a terminal, a plain line every ``interval`` seconds instead, so a log never goes quiet."""
    if not enabled:
        return None, lambda: None
    if not sys.stderr.isatty() or os.environ.get("CI"):
        return plain_progress(interval, stream or sys.stderr)
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    class TransferSpeedColumnless(TextColumn):  # files per second
        def __init__(self) -> None:
            super().__init__("")

        def render(self, task):  # type: ignore[no-untyped-def]
            from rich.text import Text

            return Text(f"{task.speed:.1f} files/s" if task.speed else "")

    bar = Progress(
        TextColumn("migrate"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TransferSpeedColumnless(),
        TimeRemainingColumn(),
        transient=True,
    )
    task = bar.add_task("files", total=None, failed=0)
    bar.start()

    def update(done: int, failed: int, total: int) -> None:
        bar.update(task, completed=done, total=total, failed=failed)

    return update, bar.stop


__all__ = ["MigrateOptions", "MigrateSummary", "build_report", "migrate", "plan", "run_timing"]
