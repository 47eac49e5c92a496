"""Migration throughput: kernels/s with 1 and 2 jobs on a generated corpus, and the scaling ratio.

Target: >= 50 kernels/s per job without --check.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench.corpus_gen import generate
from cuda2nki.batch.migrate import MigrateOptions, migrate

COUNT = int(os.environ.get("CUDA2NKI_BENCH_KERNELS", "600"))


def _run(src: Path, out: Path, jobs: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    res = migrate(MigrateOptions(src, out, jobs=jobs))
    return time.perf_counter() - t0, res.report["summary"]["kernels"]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root / "src", COUNT, seed=3)
        t1, n = _run(root / "src", root / "out1", 1)
        t2, _ = _run(root / "src", root / "out2", 2)
        t_cached, _ = _run(root / "src", root / "out2", 2)
    print(f"kernels: {n}")
    print(f"1 job : {n / t1:8.1f} kernels/s ({t1:.2f} s)")
    print(f"2 jobs: {n / t2:8.1f} kernels/s ({t2:.2f} s)  per job {n / t2 / 2:.1f}")
    print(f"scaling 2 jobs / 1 job: {t1 / t2:.2f}x")
    print(f"re-run from cache: {n / t_cached:8.1f} kernels/s ({t_cached:.2f} s)")


if __name__ == "__main__":
    main()
