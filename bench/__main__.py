"""Run every ``bench/bench_*.py`` module's ``main()`` (or the ones named on the command line).

Each benchmark reports ratios against a baseline measured in the same process, so figures are
comparable across machines.  ``python -m bench frontend simt`` (or ``bench_frontend``) runs a subset.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def available() -> list[str]:
    here = Path(__file__).parent
    return sorted(
        m.name[len("bench_") :]
        for m in pkgutil.iter_modules([str(here)])
        if m.name.startswith("bench_")
    )


def main(argv: list[str]) -> int:
    names = [n.removeprefix("bench_") for n in argv] or available()
    failed = 0
    for name in names:
        print(f"== bench {name}", flush=True)
        t0 = time.perf_counter()
        try:
            importlib.import_module(f"bench.bench_{name}").main()
        except Exception as exc:  # noqa: BLE001 - report and carry on with the other benchmarks
            failed += 1
            print(f"bench {name} failed: {type(exc).__name__}: {exc}")
        print(f"== {name} took {time.perf_counter() - t0:.1f} s\n", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
