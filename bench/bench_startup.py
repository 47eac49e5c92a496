"""Start-up cost of the command line: ``cuda2nki --version`` and ``cuda2nki rules`` against
``python -c "import numpy"``, each a fresh interpreter, median of several runs.

Printed: both times and their ratio.  The yardstick is a ratio of at most 3 for ``--version``:
a command must not pay for packages (``ml_dtypes``, the front end) it does not use.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7
LIMIT = 3.0


def _median_seconds(argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure() -> dict[str, float]:
    py = sys.executable
    return {
        "numpy": _median_seconds([py, "-c", "import numpy"]),
        "version": _median_seconds([py, "-m", "cuda2nki", "--version"]),
        "rules": _median_seconds([py, "-m", "cuda2nki", "rules"]),
    }


def main() -> None:
    t = measure()
    ratio = t["version"] / t["numpy"]
    print(f"python -c 'import numpy': {t['numpy'] * 1e3:7.1f} ms (median of {RUNS})")
    print(f"cuda2nki --version:       {t['version'] * 1e3:7.1f} ms  ratio {ratio:.2f}")
    print(
        f"cuda2nki rules:           {t['rules'] * 1e3:7.1f} ms  ratio {t['rules'] / t['numpy']:.2f}"
    )
    print(
        f"start-up ratio {ratio:.2f} (limit {LIMIT:.0f}): {'ok' if ratio <= LIMIT else 'TOO SLOW'}"
    )


if __name__ == "__main__":
    main()
