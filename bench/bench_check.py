"""Check latency per corpus port (5 seeds x the binding's shapes): median target under 3 s.

Then the row softmax whose tolerance derivation used to be quadratic in the row length
(norm/softmax_block_tree at 256x1000, 130x513, 64x4096): target under 10 s, with the share spent
deriving the tolerance from the intent's error bound."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.fidelity import check as checker
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
    softmax_rows()


def softmax_rows(rel: str = "norm/softmax_block_tree") -> float:
    """Latency of checking the row softmax's port, and the time spent deriving its tolerance."""
    cuda = ROOT / "corpus" / f"{rel}.cu"
    port = cuda.parent / "ports" / f"{cuda.stem}_port.py"
    spent = [0.0]
    derive = checker.derived_tolerance

    def timed(*args, **kw):
        t0 = time.perf_counter()
        try:
            return derive(*args, **kw)
        finally:
            spent[0] += time.perf_counter() - t0

    checker.derived_tolerance = timed  # counted where the checker calls it
    t0 = time.perf_counter()
    try:
        rep = check(cuda, port, seeds=5)
    finally:
        checker.derived_tolerance = derive
    dt = time.perf_counter() - t0
    print(
        f"row softmax check {rel}: {dt:.2f} s ({spent[0]:.2f} s deriving tolerances)"
        f"  {rep.verdict}  (target < 10 s)"
    )
    return dt


if __name__ == "__main__":
    main()
