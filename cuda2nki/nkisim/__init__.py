"""NumPy simulator of AWS Trainium NKI kernels (current ``nki`` API and legacy ``neuronxcc.nki``).

Public entry points:

* :func:`simulate_kernel` -- run a kernel on host arrays -> :class:`SimResult` (outputs, trace,
  profile, warnings);
* :func:`load_kernel` -- import a port file with ``nki`` / ``neuronxcc.nki`` resolved to the
  simulator and return its kernel;
* :func:`nki_namespace` -- context manager installing the simulator's ``nki`` modules;
* :func:`build_profile` -- cost-model summary of a trace.

Importing this package patches nothing.
"""

from cuda2nki.nkisim.importer import load_kernel, load_module, nki_namespace
from cuda2nki.nkisim.kernel import Kernel, SimResult, simulate_kernel
from cuda2nki.nkisim.state import TARGETS, Target, resolve_target

__all__ = [
    "Kernel",
    "SimResult",
    "TARGETS",
    "Target",
    "load_kernel",
    "load_module",
    "nki_namespace",
    "resolve_target",
    "simulate_kernel",
    "build_profile",
]


def build_profile(trace, state=None):
    from cuda2nki.nkisim.profile import build_profile as _bp

    return _bp(trace, state)
