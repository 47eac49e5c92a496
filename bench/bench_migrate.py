"""Migration throughput: kernels/s with 1 and 2 jobs on a generated corpus, and the scaling ratio.

Target: >= 50 kernels/s per job without --check.  ``CUDA2NKI_BENCH_KERNELS`` sets the corpus size
(default 600), ``CUDA2NKI_BENCH_REPEAT`` the runs per job count (default 2; the range is printed,
since a shared machine is noisy).  Besides wall-clock rates it prints kernels per CPU second of the
workers (less sensitive to other load) and where the worker time goes, by idiom.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.corpus_gen import generate
from cuda2nki.batch.migrate import MigrateOptions, migrate

COUNT = int(os.environ.get("CUDA2NKI_BENCH_KERNELS", "600"))
REPEAT = max(1, int(os.environ.get("CUDA2NKI_BENCH_REPEAT", "2")))


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(src: Path, out: Path, jobs: int) -> tuple[float, float, int]:
    """(wall seconds, worker CPU seconds, kernels) of one uncached run."""
    shutil.rmtree(out, ignore_errors=True)
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    res = migrate(MigrateOptions(src, out, jobs=jobs))
    return time.perf_counter() - t0, _children_cpu() - cpu0, res.report["summary"]["kernels"]


def _range(values: list[float], fmt: Callable[[float], str]) -> str:
    lo, hi = min(values), max(values)
    return fmt(lo) if len(values) == 1 else f"{fmt(lo)} .. {fmt(hi)}"


def _by_idiom(out: Path) -> list[tuple[str, int, float]]:
    """(idiom or status, kernels, worker seconds) from the last run's report and timing."""
    report = json.loads((out / "report.json").read_text())
    times = json.loads((out / "timing.json").read_text())["per_file"]
    acc: dict[str, list[float]] = {}
    for r in report["kernels"]:
        ft = times.get(r["file"], {})
        secs = ft.get("kernels", {}).get(r["kernel"], 0.0) if r["kernel"] else ft.get("seconds")
        acc.setdefault(r["idiom"] or r["status"], []).append(secs or 0.0)
    return sorted(((k, len(v), sum(v)) for k, v in acc.items()), key=lambda t: -t[2])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root / "src", COUNT, seed=3)
        runs: dict[int, list[tuple[float, float, int]]] = {1: [], 2: []}
        for _ in range(REPEAT):
            for jobs in (1, 2):
                runs[jobs].append(_run(root / "src", root / f"out{jobs}", jobs))
        t0 = time.perf_counter()
        migrate(MigrateOptions(root / "src", root / "out2", jobs=2))
        t_cached = time.perf_counter() - t0
        idioms = _by_idiom(root / "out1")
    n = runs[1][0][2]
    rate = {j: [n / wall for wall, _, _ in rs] for j, rs in runs.items()}
    cpu_rate = [n / cpu for _, cpu, _ in runs[1] + runs[2] if cpu > 0]
    print(f"kernels: {n}, runs per job count: {REPEAT}")
    print(f"1 job : {_range(rate[1], lambda v: f'{v:.1f}')} kernels/s")
    print(
        f"2 jobs: {_range(rate[2], lambda v: f'{v:.1f}')} kernels/s  "
        f"(per job {_range([v / 2 for v in rate[2]], lambda v: f'{v:.1f}')})"
    )
    best = max(rate[2]) / max(rate[1])
    print(f"scaling 2 jobs / 1 job: {best:.2f}x (best runs)")
    print(f"per CPU second of the workers: {_range(cpu_rate, lambda v: f'{v:.1f}')} kernels")
    print(f"re-run from cache: {n / t_cached:8.1f} kernels/s ({t_cached:.2f} s)")
    total = sum(s for _, _, s in idioms) or 1.0
    print("worker time by idiom (1-job run): idiom, kernels, seconds, share, ms/kernel")
    for name, count, secs in idioms:
        print(
            f"  {name:12s} {count:5d} {secs:8.2f} {100 * secs / total:5.1f}% "
            f"{1000 * secs / count:8.1f}"
        )


if __name__ == "__main__":
    main()
