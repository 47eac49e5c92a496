"""Check latency per corpus port (5 seeds x the binding's shapes, as ``cuda2nki check`` runs by
default): every hand-written port under ``corpus/*/ports/`` (correct and flawed, both APIs) and
the literal (thread-by-thread) ports the tool drafts for a set of corpus kernels.  Targets: median
at most 5 s and max at most 60 s over all of them on a 2-core machine; both are printed.  A port
whose binding points ran it once (its first run issued more than the check's limit of engine
instructions: C2N4029) is marked.  The checks run in one process, in order, so a port checked
after another port of the same kernel finds the CUDA kernel's runs remembered (refcache).  The
machine may be shared, so each check's CPU time is printed too: the checker's own and that of
its sandboxed interpreter (start-up included, as the sandbox reports it).

Then the row softmax whose tolerance derivation used to be quadratic in the row length
(norm/softmax_block_tree at 256x1000, 130x513, 64x4096): target under 10 s, with the share spent
deriving the tolerance from the intent's error bound."""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.fidelity import check_judge as judging
from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.sandbox import PortSandbox

ROOT = Path(__file__).resolve().parents[1]

#: corpus kernels whose forced literal port is checked too: maps, row and column reductions, a
#: gather, a normalisation and a matmul (the literal lowering runs every CUDA thread)
LITERAL = (
    "basic/vector_add",
    "activation/gelu_tanh",
    "reduce/column_sum",
    "norm/softmax_naive",
    "norm/layernorm",
    "misc/nll_gather",
    "linalg/matmul_tiled",
)

MEDIAN_TARGET_S = 5.0
MAX_TARGET_S = 60.0


def _cuda_for(port: Path) -> Path:
    stem = port.stem.split("_port")[0].split("_flaw_")[0].removesuffix("_legacy")
    return port.parent.parent / f"{stem}.cu"


#: CPU seconds of the sandboxed interpreters closed so far (each reports its own, start-up included)
_SANDBOX_CPU = [0.0]
#: per port: (checker CPU s, sandbox CPU s)
CPU: dict[str, tuple[float, float]] = {}


def _count_sandbox_cpu() -> None:
    close = PortSandbox.close

    def counted(self: PortSandbox) -> None:
        _SANDBOX_CPU[0] += self.child_cpu_s
        self.child_cpu_s = 0.0
        close(self)

    PortSandbox.close = counted  # type: ignore[method-assign]


def _timed(label: str, cuda: Path, port: Path) -> float:
    t0 = time.perf_counter()
    c0, s0 = time.process_time(), _SANDBOX_CPU[0]
    try:
        rep = check(cuda, port, seeds=5)
        verdict = rep.verdict
        if any(f.code == "C2N4029" for f in rep.findings):
            verdict += " (heavy points run once, C2N4029)"
    except DiagnosticError as exc:
        verdict = f"error {exc.diagnostic.code}"
    dt = time.perf_counter() - t0
    cpu = (time.process_time() - c0, _SANDBOX_CPU[0] - s0)
    CPU[label.split()[0]] = cpu
    print(
        f"{label:52s} {dt:6.2f} s  (CPU {cpu[0]:5.2f} + sandbox {cpu[1]:5.2f} s)  {verdict}",
        flush=True,
    )
    return dt


def literal_ports(tmp: Path, kernels: tuple[str, ...] = LITERAL) -> list[tuple[Path, Path]]:
    """(CUDA file, drafted literal port) for each kernel of ``kernels``."""
    from cuda2nki.api import port as draft

    out = []
    for rel in kernels:
        cu = ROOT / "corpus" / f"{rel}.cu"
        res = draft(cu, lowering="literal")
        if res.source is None:
            print(f"{rel}: no literal port ({[d.code for d in res.diagnostics]})")
            continue
        path = tmp / f"{cu.stem}_literal.py"
        path.write_text(res.source)
        out.append((cu, path))
    return out


def main(argv: list[str] | None = None) -> None:
    """``python bench/bench_check.py [substring ...]``: only the ports whose names hold one (a
    literal port is named ``<kernel>_literal``)."""
    only = list(argv or ())
    _count_sandbox_cpu()
    times: dict[str, float] = {}
    for port in sorted(ROOT.glob("corpus/*/ports/*.py")):
        if not only or any(o in port.stem for o in only):
            times[port.stem] = _timed(port.stem, _cuda_for(port), port)
    with tempfile.TemporaryDirectory() as tmp:
        kernels = tuple(
            k for k in LITERAL if not only or any(o in f"{Path(k).name}_literal" for o in only)
        )
        for cu, port in literal_ports(Path(tmp), kernels):
            times[port.stem] = _timed(f"{port.stem} (literal)", cu, port)
    if times:
        worst = max(times, key=times.__getitem__)
        med = statistics.median(times.values())
        print(
            f"check latency over {len(times)} ports: median {med:.2f} s "
            f"(target <= {MEDIAN_TARGET_S:g} s), max {times[worst]:.2f} s ({worst}; target <= "
            f"{MAX_TARGET_S:g} s)"
        )
        total = {k: sum(v) for k, v in CPU.items()}
        heavy = max(total, key=total.__getitem__)
        print(
            f"check CPU (checker + sandbox) over {len(total)} ports: median "
            f"{statistics.median(total.values()):.2f} s, max {total[heavy]:.2f} s ({heavy}); "
            f"sandbox share: median {statistics.median(c for _, c in CPU.values()):.2f} s"
        )
    if not only:
        softmax_rows()


def softmax_rows(rel: str = "norm/softmax_block_tree") -> float:
    """Latency of checking the row softmax's port, and the time spent deriving its tolerance."""
    cuda = ROOT / "corpus" / f"{rel}.cu"
    port = cuda.parent / "ports" / f"{cuda.stem}_port.py"
    spent = [0.0]
    derive = judging.derived_tolerance

    def timed(*args, **kw):
        t0 = time.perf_counter()
        try:
            return derive(*args, **kw)
        finally:
            spent[0] += time.perf_counter() - t0

    judging.derived_tolerance = timed  # counted where the checker calls it
    t0 = time.perf_counter()
    try:
        rep = check(cuda, port, seeds=5)
    finally:
        judging.derived_tolerance = derive
    dt = time.perf_counter() - t0
    print(
        f"row softmax check {rel}: {dt:.2f} s ({spent[0]:.2f} s deriving tolerances)"
        f"  {rep.verdict}  (target < 10 s)"
    )
    return dt


if __name__ == "__main__":
    main(sys.argv[1:])
