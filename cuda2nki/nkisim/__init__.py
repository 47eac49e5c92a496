"""NumPy simulator of AWS Trainium NKI kernels (current ``nki`` API and legacy ``neuronxcc.nki``).

Public entry points:

* :func:`simulate_kernel` -- run a kernel on host arrays -> :class:`SimResult` (``outputs``,
  ``trace``: one :class:`~cuda2nki.nkisim.state.Instr` per executed instruction, ``profile`` when
  asked, ``warnings``);
* :func:`load_kernel` / :func:`load_module` -- import a port file with ``nki`` / ``neuronxcc.nki``
  resolved to the simulator and return its kernel (or module);
* :func:`nki_namespace` -- context manager installing the simulator's ``nki`` modules;
* :func:`build_profile` -- cost-model summary (:class:`~cuda2nki.nkisim.profile.Profile`) of a trace.

Importing this package patches nothing.

Layout: ``dtypes`` (NKI dtypes, rounding, legacy promotion), ``tensor`` (storages, views,
indexing, access patterns, legacy index expressions and masks), ``engine`` (operand checks,
trace recording, enums), ``isa`` (current ``nki.isa``), ``legacy_isa`` (beta-1 ``nki.isa``
wrappers returning results), ``language`` (``nki.language`` for both generations), ``ops``
(ALU/activation math), ``kernel`` (jit, runs, SPMD/LNC), ``importer`` (namespace modules),
``profile`` (cost model), ``state`` (targets, per-run state).

Choices where the reference (NKI.md) is silent or uncertain, each pinned by a test:

* float -> narrower float is RNE through ml_dtypes; ``float8_e4m3fn`` overflow gives NaN;
  float -> int is RNE with saturation and NaN -> 0; tfloat32 is fp32 rounded to 10 mantissa bits.
* Fresh allocations hold a NaN canary (``dtypes.CANARY_BITS``) / 4; HBM outputs are poisoned
  lazily (only elements never written), so allocate-then-overwrite costs nothing extra.
* Kernel inputs are used in place and copied on the first write (callers' arrays never change),
  except for a legacy in/out kernel (one that returns nothing): the arguments it writes are
  its results, copied back into the caller's arrays as the legacy simulator does.
* Legacy forms the legacy compiler legalises are accepted: a PSUM matmul operand is copied to
  SBUF first (a recorded tensor_copy), ``nisa.tensor_tensor`` reads a ``(P, 1)`` operand along
  the other's free axes, and a tile may be partition-only (``(P,)``).
* A single-instance launch may return an ``nl.hbm`` (private HBM) tensor; SPMD grids and LNC
  launches need ``nl.shared_hbm`` outputs.
* ``nki.compiler`` decorators and direct allocations only steer the compiler: accepted, with
  the tensor placed like any other tile of its memory.
* ``nc_matmul(accumulate=None)``: per element, first write overwrites, later writes add.
  Accumulation chains into one PSUM region are evaluated as one GEMM over the concatenated
  contraction axis when the region is next read (fp32, summation order may differ).
* Current-API ``nl`` binary ops require equal shapes; Python scalars do not widen the result
  dtype (legacy: weak-scalar promotion of reference 8.3).
* ``activation(reduce_res=..., reduce_cmd=idle)`` behaves as ``reset_reduce``.
* SBUF/PSUM capacity is sampled at every instruction over the storages still alive (Python
  object lifetime): a tile rebound in a loop is freed when its name is rebound, and an old tile
  still bound while its replacement is being computed is not counted (see ``state``).  PSUM
  tiles occupy whole 2 KiB banks.
* Legacy ``mask=`` that selects a box of index ranges runs the instruction on the sliced operands
  (the "reduced shape"); other masks gate the writes elementwise.
* Random numbers (dropout, rng, rand2, nl.rand) are statistically, not bit-, faithful.
* ``sequence_bounds``: a segment is a run of equal consecutive ids; ends are exclusive.

Documented APIs that are not modelled (``importer.NOT_SIMULATED``, tensor methods in
``tensor._TENSOR_NOT_SIMULATED``), and any other unknown name, stop the run with C2N3001 naming
the API and the port's line; ``docs/nki-api-coverage.md`` lists them.

Errors are :class:`~cuda2nki.diagnostics.DiagnosticError`; an out-of-bounds access (C2N3019) is
a :class:`DiagnosticIndexError`, also an ``IndexError``.  A kernel called directly (``k(...)``,
``nki.simulate``, the legacy ``simulate_kernel``) raises exactly ``IndexError`` with NumPy's
message about the flattened index, as the public NKI simulator does, chained from the diagnostic
(:mod:`cuda2nki.nkisim.oob`).
"""

from cuda2nki.nkisim.errors import DiagnosticIndexError
from cuda2nki.nkisim.importer import load_kernel, load_module, nki_namespace
from cuda2nki.nkisim.kernel import Kernel, SimResult, simulate_kernel
from cuda2nki.nkisim.state import TARGETS, Target, resolve_target

__all__ = [
    "DiagnosticIndexError",
    "Kernel",
    "SimResult",
    "TARGETS",
    "Target",
    "build_profile",
    "load_kernel",
    "load_module",
    "nki_namespace",
    "resolve_target",
    "simulate_kernel",
]


def build_profile(trace, state=None):
    """Cost-model profile of a trace (see :mod:`cuda2nki.nkisim.profile`)."""
    from cuda2nki.nkisim.profile import build_profile as _bp

    return _bp(trace, state)
