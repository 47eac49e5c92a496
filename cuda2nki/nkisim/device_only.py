"""Legacy ``nki.benchmark``: compile the kernel, run it on a Neuron device ``iters`` times and
keep the latency statistics in ``benchmark_result`` (``nc_latency.get_latency_percentile``).

Its result is a device timing, which a simulator has none of: the wrapped kernel refuses with
C2N3001, naming ``nki.benchmark``, when it is called or launched on a grid, before any
simulation work (a benchmark runs kernels at the sizes whose speed matters), and so does
reading ``benchmark_result``.  A library kernel the simulator refuses stays refused by its own
name (``library_kernels``).  To check the kernel's values, call it through ``simulate_kernel``
or ``baremetal``; for an estimate of its time, ``cuda2nki profile``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from cuda2nki.nkisim.errors import unsupported
from cuda2nki.nkisim.library_kernels import is_refused

API = "nki.benchmark"
REASON = (
    "it times the kernel on a Neuron device; the simulator has no device clock "
    "(check values with simulate_kernel, estimate time with 'cuda2nki profile')"
)


@dataclass(frozen=True)
class BenchmarkedKernel:
    """``nki.benchmark(...)(kernel)``: refuses when used."""

    kernel: Any

    def refuse(self) -> NoReturn:
        raise unsupported(API, REASON)

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self.refuse()

    def __getitem__(self, grid: Any) -> NoReturn:
        self.refuse()

    @property
    def benchmark_result(self) -> NoReturn:
        self.refuse()


def benchmark(kernel=None, **options: Any):
    """Legacy ``nki.benchmark(kernel, warmup=, iters=, save_neff_name=, ...)``, also as a
    decorator factory ``nki.benchmark(warmup=5, iters=10)(kernel)``."""
    if kernel is None:
        return lambda k: benchmark(k, **options)
    if is_refused(kernel):
        return kernel
    return BenchmarkedKernel(kernel)
