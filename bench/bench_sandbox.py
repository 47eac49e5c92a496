"""The port sandbox's cost: one sandboxed run of a port (a fresh interpreter in bubblewrap with the
seccomp filter, inputs and outputs through ``.npz``) against simulating the same port in this
process, on the same inputs.

Printed: the sandboxed round trip, the in-process simulation, their ratio, and the sandbox's
fixed cost (the difference).  A check pays the fixed cost once (all test points share one
sandbox) while it computes the CUDA references in parallel.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PORT = ROOT / "corpus/basic/ports/vector_add_port.py"


def _inputs(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"a": rng.standard_normal(n, np.float32), "b": rng.standard_normal(n, np.float32)}


def _in_process(kw: dict[str, np.ndarray]) -> float:
    from cuda2nki import nkisim

    fn = nkisim.load_kernel(str(PORT), "vector_add")
    t0 = time.perf_counter()
    nkisim.simulate_kernel(fn, kw, target="trn2", profile=True)
    return time.perf_counter() - t0


def _sandboxed(kw: dict[str, np.ndarray]) -> float:
    from cuda2nki.fidelity.sandbox import PortSandbox

    t0 = time.perf_counter()
    with PortSandbox(str(PORT), "vector_add", [[kw]], timeout=120) as box:
        res = box.result(0)
    assert res.status == "ok", res.error
    return time.perf_counter() - t0


def main(repeat: int = 3) -> None:
    from cuda2nki.fidelity.sandbox import isolation

    if isolation().missing:
        print(f"sandbox layers missing, skipped: {isolation().missing}")
        return
    for n in (4096, 1 << 22):
        kw = _inputs(n)
        inproc = min(_in_process(kw) for _ in range(repeat))
        boxed = min(_sandboxed(kw) for _ in range(repeat))
        print(
            f"vector_add n={n}: sandboxed {boxed * 1e3:.0f} ms, in-process {inproc * 1e3:.1f} ms, "
            f"ratio {boxed / inproc:.1f}x, fixed cost {(boxed - inproc) * 1e3:.0f} ms"
        )


if __name__ == "__main__":
    main()
