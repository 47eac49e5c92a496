"""Simulator overhead: NKI simulator time / plain NumPy time for the same result.

Kernels from ``tests/nkisim/kernels/current`` (idiomatic 128-partition tiles):

* bf16 tiled matmul 2048 x 2048 x 2048 (fp32 PSUM accumulation) vs one fp32 ``np.matmul``, and
  the same in the legacy API (``tests/nkisim/kernels/legacy``, ``psum += nl.matmul``);
* the tutorial's published size, 4096 x 8192 x 8192 bf16 (left out with
  ``BENCH_NKISIM_SMALL=1``);
* row softmax 4096 x 4096 fp32 vs a NumPy softmax;
* tensor add 4096 x 8192 fp32 vs ``np.add``.

Targets: <= 3x for matmul (both API generations, and the published size) and add, <= 5x for
softmax; "ok" is judged on process CPU time (all threads), since on a shared machine wall time
includes waiting for a core (both are printed).  Then the fixed cost per instruction: a kernel
of 10,000 instructions on (128, 4) tiles, median microseconds per instruction over 7 runs, in the
current API and the same instructions in the legacy API (result tiles assigned with
``t[...] =``); target <= 10 us CPU for each. Both sides are best-of-N in one process. The simulator runs kernels with BLAS limited to one thread
(many small 128 x 128 x 512 GEMMs), so the NumPy baseline is measured under the same limit.
For the add it also times the kernel's tile copies in plain NumPy (no simulator): reading a
row-major 4096 x 8192 array in 128 x 512 tiles costs about 2.3x one streaming ``np.add`` by
itself.  The simulator does not pay that: it defers a load from a kernel argument into a new
tile, a ``tensor_tensor`` of two such tiles, and the store of the result into a fresh output,
and evaluates the collected stores as a few large rectangles (``nkisim/deferred.py``); what is
left is the simulator's per-instruction work (checks, trace records) and one pass of ``np.add``.
``python -m bench nkisim``; set ``BENCH_NKISIM_PROFILE=1`` to print the simulator's cProfile hot
spots per kernel.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

KERNELS = Path(__file__).resolve().parents[1] / "tests" / "nkisim" / "kernels" / "current"


@dataclass(frozen=True)
class Row:
    name: str
    sim: Timing
    numpy: Timing
    target: float
    max_err: float

    @property
    def ratio(self) -> float:
        return self.sim.wall / self.numpy.wall

    @property
    def cpu_ratio(self) -> float:
        return self.sim.cpu / self.numpy.cpu


@dataclass(frozen=True)
class Timing:
    wall: float  # best wall-clock seconds
    cpu: float  # best process CPU seconds (all threads)


def best_of(fn: Callable[[], object], repeat: int) -> tuple[Timing, object]:
    wall, cpu, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return Timing(wall, cpu), out


def baseline(fn: Callable[[], object], repeat: int) -> tuple[Timing, object]:
    """NumPy reference timing under the simulator's BLAS setting (one thread)."""
    from cuda2nki.nkisim.kernel import single_threaded_blas

    with single_threaded_blas():
        return best_of(fn, repeat)


def _first(outputs: object) -> np.ndarray:
    if isinstance(outputs, (tuple, list)):
        return np.asarray(outputs[0])
    if isinstance(outputs, dict):
        return np.asarray(next(iter(outputs.values())))
    return np.asarray(outputs)


def simulate(
    stem: str, func: str, inputs: dict, repeat: int, profile: bool, folder: Path = KERNELS
) -> tuple[Timing, np.ndarray]:
    from cuda2nki.nkisim import load_kernel, simulate_kernel

    kernel = load_kernel(str(folder / f"{stem}.py"), func)
    run = lambda: _first(simulate_kernel(kernel, inputs).outputs)  # noqa: E731
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        run()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(18)
        print(f"-- cProfile {stem} (sorted by own time)\n{buf.getvalue()}")
    return best_of(run, repeat)


def softmax_np(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def bench_matmul(rng: np.random.Generator, profile: bool) -> Row:
    n = 2048
    a32 = rng.standard_normal((n, n), dtype=np.float32)
    b32 = rng.standard_normal((n, n), dtype=np.float32)
    lhsT = np.ascontiguousarray(a32.T).astype(ml_dtypes.bfloat16)
    rhs = b32.astype(ml_dtypes.bfloat16)
    a_f, b_f = lhsT.astype(np.float32).T.copy(), rhs.astype(np.float32)
    t_np, ref = baseline(lambda: np.matmul(a_f, b_f), 3)
    t_sim, got = simulate(
        "matmul_tiled", "matmul_tiled_kernel", {"lhsT": lhsT, "rhs": rhs}, 2, profile
    )
    err = float(np.max(np.abs(got.astype(np.float32) - ref) / (np.abs(ref) + 1.0)))
    return Row("bf16 matmul 2048^3", t_sim, t_np, 3.0, err)


def bench_softmax(rng: np.random.Generator, profile: bool) -> Row:
    x = rng.standard_normal((4096, 4096), dtype=np.float32)
    t_np, ref = baseline(lambda: softmax_np(x), 5)
    t_sim, got = simulate("softmax", "softmax_kernel", {"x": x}, 3, profile)
    return Row("softmax 4096x4096", t_sim, t_np, 5.0, float(np.max(np.abs(got - ref))))


def tiled_add(a: np.ndarray, b: np.ndarray, p: int = 128, f: int = 512) -> np.ndarray:
    """The add kernel's data movement in plain NumPy: tiles copied in, added, copied out."""
    out = np.empty_like(a)
    for m in range(0, a.shape[0], p):
        for n in range(0, a.shape[1], f):
            at = np.empty((p, f), a.dtype)
            bt = np.empty((p, f), b.dtype)
            ct = np.empty((p, f), a.dtype)
            rows, cols = min(p, a.shape[0] - m), min(f, a.shape[1] - n)
            at[:rows, :cols] = a[m : m + rows, n : n + cols]
            bt[:rows, :cols] = b[m : m + rows, n : n + cols]
            np.add(at[:rows, :cols], bt[:rows, :cols], out=ct[:rows, :cols])
            out[m : m + rows, n : n + cols] = ct[:rows, :cols]
    return out


def bench_add(rng: np.random.Generator, profile: bool) -> Row:
    a = rng.standard_normal((4096, 8192), dtype=np.float32)
    b = rng.standard_normal((4096, 8192), dtype=np.float32)
    t_np, ref = baseline(lambda: np.add(a, b), 5)
    t_tiled, _ = baseline(lambda: tiled_add(a, b), 3)
    t_sim, got = simulate("tensor_add", "tensor_add_kernel", {"a": a, "b": b}, 3, profile)
    print(
        f"add: the same tile copies in plain NumPy take {t_tiled.cpu * 1e3:.1f} ms CPU "
        f"({t_tiled.cpu / t_np.cpu:.1f}x np.add): the tile-order memory traffic, without the "
        "simulator"
    )
    return Row("add 4096x8192", t_sim, t_np, 3.0, float(np.max(np.abs(got - ref))))


LEGACY_KERNELS = KERNELS.parent / "legacy"


def bench_matmul_legacy(rng: np.random.Generator, profile: bool) -> Row:
    """The same matmul in the legacy API (``psum += nl.matmul`` over K tiles)."""
    n = 2048
    lhsT = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    rhs = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    a_f, b_f = lhsT.astype(np.float32).T.copy(), rhs.astype(np.float32)
    t_np, ref = baseline(lambda: np.matmul(a_f, b_f), 3)
    t_sim, got = simulate(
        "matmul_tiled",
        "matmul_tiled_kernel",
        {"lhsT": lhsT, "rhs": rhs},
        2,
        profile,
        LEGACY_KERNELS,
    )
    err = float(np.max(np.abs(got.astype(np.float32) - ref) / (np.abs(ref) + 1.0)))
    return Row("legacy matmul 2048^3", t_sim, t_np, 3.0, err)


def _fp32_matmul(lhsT: np.ndarray, rhs: np.ndarray) -> tuple[Timing, np.ndarray]:
    """One fp32 ``lhsT.T @ rhs`` (the fp32 copies are freed on return)."""
    a_f, b_f = lhsT.astype(np.float32).T.copy(), rhs.astype(np.float32)
    return baseline(lambda: np.matmul(a_f, b_f), 1)


def bench_matmul_published(rng: np.random.Generator, profile: bool) -> Row:
    """The tutorial's published size, 4096 x 8192 x 8192 bf16 (M x K x N), vs one fp32 matmul."""
    m, k, n = 4096, 8192, 8192
    lhsT = rng.standard_normal((k, m), dtype=np.float32).astype(ml_dtypes.bfloat16)
    rhs = rng.standard_normal((k, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    t_np, ref = _fp32_matmul(lhsT, rhs)
    t_sim, got = simulate(
        "matmul_tiled", "matmul_tiled_kernel", {"lhsT": lhsT, "rhs": rhs}, 1, profile
    )
    err = float(np.max(np.abs(got.astype(np.float32) - ref) / (np.abs(ref) + 1.0)))
    return Row("bf16 matmul 4096x8192^2", t_sim, t_np, 3.0, err)


TINY = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tiny_kernel(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    u = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    for i in nl.affine_range(N):
        nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=1.0001)
        nisa.tensor_tensor(dst=t, data1=u, data2=t, op=nl.subtract)
        nisa.activation(dst=u, op=nl.exp, data=t)
        nisa.tensor_copy(dst=t, src=u)
    nisa.dma_copy(dst=out, src=t)
    return out
"""


# the same instructions in the legacy API: each one a result tile written with ``t[...] =``
TINY_LEGACY = """
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def tiny_kernel(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    u = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    for i in nl.sequential_range(N):
        u[...] = nisa.tensor_scalar(t, np.multiply, 1.0001)
        t[...] = nl.subtract(u, t)
        u[...] = nisa.activation(np.exp, t)
        t[...] = nl.copy(u)
    nl.store(out, t)
    return out
"""


TINY_TARGET_US = 10.0  # median CPU microseconds per instruction, each API generation


def bench_tiny_instructions(
    n: int = 2500, runs: int = 7, source: str = TINY
) -> tuple[float, float]:
    """Median microseconds per instruction (wall, process CPU) of a kernel of many (128, 4)
    instructions."""
    import tempfile

    from cuda2nki.nkisim import load_kernel, simulate_kernel

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tiny.py"
        path.write_text(source.replace("range(N)", f"range({n})"))
        kernel = load_kernel(str(path), "tiny_kernel")
        x = np.full((128, 4), 0.5, np.float32)
        wall, cpu = [], []
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            res = simulate_kernel(kernel, [x])
            wall.append((time.perf_counter() - t0) / len(res.trace) * 1e6)
            cpu.append((time.process_time() - c0) / len(res.trace) * 1e6)
    return float(np.median(wall)), float(np.median(cpu))


def main() -> None:
    profile = os.environ.get("BENCH_NKISIM_PROFILE", "") not in ("", "0")
    rng = np.random.default_rng(0)
    benches = [bench_matmul, bench_matmul_legacy, bench_softmax, bench_add]
    if os.environ.get("BENCH_NKISIM_SMALL", "") in ("", "0"):
        benches.append(bench_matmul_published)
    rows = [bench(rng, profile) for bench in benches]
    for api, source in (("current", TINY), ("legacy", TINY_LEGACY)):
        wall, cpu = bench_tiny_instructions(source=source)
        ok = "ok" if cpu <= TINY_TARGET_US else "NOT MET"
        print(
            f"per-instruction overhead, {api} API, (128, 4) tiles: {wall:.1f} us wall, "
            f"{cpu:.1f} us CPU median (target <= {TINY_TARGET_US:.0f} us CPU: {ok})"
        )
    print("BLAS limited to one thread for both the simulator and the NumPy baseline")
    head = f"{'kernel':<24}{'sim wall':>9}{'np wall':>9}{'ratio':>7}{'sim cpu':>9}{'np cpu':>8}"
    print(f"{head}{'ratio':>7}{'target':>8}  {'max err':>9}  ok (cpu)")
    for r in rows:
        ok = "yes" if r.cpu_ratio <= r.target else "NO"
        print(
            f"{r.name:<24}{r.sim.wall:>9.3f}{r.numpy.wall:>9.4f}{r.ratio:>6.1f}x"
            f"{r.sim.cpu:>9.3f}{r.numpy.cpu:>8.4f}{r.cpu_ratio:>6.1f}x{r.target:>7.0f}x"
            f"  {r.max_err:>9.2e}  {ok}"
        )


if __name__ == "__main__":
    main()
