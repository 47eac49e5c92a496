"""Check latency per corpus port (5 seeds x the binding's shapes): median target under 3 s."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.fidelity.check import check

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    times = []
    for port in sorted(ROOT.glob("corpus/*/ports/*_port.py")):
        cuda = port.parent.parent / (port.stem.removesuffix("_port") + ".cu")
        t0 = time.perf_counter()
        try:
            rep = check(cuda, port, seeds=5)
            verdict = rep.verdict
        except DiagnosticError as exc:
            verdict = f"error {exc.diagnostic.code}"
        dt = time.perf_counter() - t0
        times.append(dt)
        print(f"{port.stem:40s} {dt:6.2f} s  {verdict}")
    if times:
        print(
            f"median check latency: {statistics.median(times):.2f} s over {len(times)} ports (target < 3 s)"
        )


if __name__ == "__main__":
    main()
