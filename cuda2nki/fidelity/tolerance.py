"""Tolerances: derived from the kernel's intent IR when it can be lifted, per-dtype defaults otherwise.

Derived (preferred): the IR evaluator's componentwise bound ``c·(2·u_in + γ_K(u_acc))·(|A|·|B|)``
(and its analogues for sums and elementwise math), evaluated in fp64 on the very inputs of the run.
Alternative bounds for narrower input or accumulation precisions (bf16) are computed the same way
and let the comparison tell *precision loss* from a defect.

Defaults (fallback, reported as C2N4013): ``atol + rtol·|expected|`` with torch.testing's per-dtype
values (PRIOR_ART §4.1), the relative part widened by the reduction length ``K`` when it is known
(``rtol·max(1, K·u/eps_fp32)`` is avoided in favour of the simpler, documented ``rtol·sqrt(K)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: (rtol, atol) per output dtype, torch.testing.assert_close defaults
DEFAULTS: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float8_e4m3": (0.125, 1e-3),
    "float8_e4m3fn": (0.125, 1e-3),
    "float8_e5m2": (0.25, 1e-3),
}
#: unit roundoff per dtype (PRIOR_ART §4.2)
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "tfloat32": 2.0**-11,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "float8_e4m3": 2.0**-4,
    "float8_e4m3fn": 2.0**-4,
    "float8_e5m2": 2.0**-3,
}
#: spacing of the subnormals per dtype: rounding to the dtype errs by up to half of it in absolute
#: terms, beyond ``u·|x|`` (bf16 keeps fp32's exponent range with 7 fraction bits)
SUBNORMAL_SPACING = {"float32": 2.0**-149, "bfloat16": 2.0**-133, "float16": 2.0**-24}


def subnormal_floor(inputs: dict[str, np.ndarray], dtype: str) -> float:
    """An absolute term for rounding the inputs to ``dtype``: a subnormal input rounded there errs
    by up to half the subnormal spacing, and a contraction multiplies that by at most the largest
    input magnitude times the largest extent (a bound on the reduction length).  Far below any
    real defect; it keeps a tiny special-value input from turning precision loss into a defect."""
    arrays = [np.asarray(a) for a in inputs.values() if np.asarray(a).dtype.kind in "fV"]
    if not arrays:
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        big = max(float(np.nanmax(np.abs(a.astype(np.float64)), initial=0.0)) for a in arrays)
    extent = max((max(a.shape, default=1) for a in arrays), default=1)
    if not np.isfinite(big):
        return 0.0
    return SUBNORMAL_SPACING.get(dtype, 0.0) / 2 * max(big, 1.0) * extent


#: safety factor on derived bounds
SAFETY = 2.0


@dataclass(frozen=True)
class Tolerance:
    bound: np.ndarray | float  # componentwise absolute tolerance
    source: str  # "ir" | "default"
    reason: str = ""  # why the default was used
    rtol: float = 0.0
    atol: float = 0.0
    alternatives: Mapping[str, Any] | None = None  # precision hypothesis -> bound


def default_tolerance(
    expected: np.ndarray, dtype: str, reduction_len: int | None = None, reason: str = ""
) -> Tolerance:
    rtol, atol = DEFAULTS.get(dtype, (0.0, 0.0))
    if dtype.startswith(("int", "uint", "bool")):
        rtol, atol = 0.0, 0.0
    if reduction_len and reduction_len > 1:
        rtol *= math.sqrt(reduction_len)
        atol *= math.sqrt(reduction_len)
    e = np.abs(np.asarray(expected, dtype=np.float64))
    scale = _reference_scale(e)
    bound = atol * max(scale, 1.0) + rtol * e
    alts = {}
    if dtype in ("float32", "float64"):
        # a bf16 input or accumulation error: ~sqrt(K) roundings of u_bf16 relative to the magnitude
        # of the terms, which the output's own magnitude (plus its typical size) stands in for
        k = math.sqrt(reduction_len) if reduction_len and reduction_len > 1 else 1.0
        alts["bf16 inputs or accumulation"] = 4.0 * UNIT_ROUNDOFF["bfloat16"] * k * (e + scale)
    return Tolerance(bound, "default", reason, rtol, atol, alts)


#: safety factor on the measured fp32-vs-fp64 error of the CUDA kernel itself
EMPIRICAL_SAFETY = 4.0


def empirical_tolerance(
    expected: np.ndarray, oracle64: np.ndarray, dtype: str, reduction_len: int | None = None
) -> Tolerance:
    """Default tolerance widened by the kernel's own measured rounding error on these inputs.

    ``d = |fp32 CUDA - fp64 CUDA|``; the bound adds ``EMPIRICAL_SAFETY * (d + P99(d))`` to the
    per-dtype default: a port of the same precision may be off from the fp32 reference by about
    the fp32 reference's own error again, elementwise (d) or where rounding lands differently (P99).
    """
    base = default_tolerance(expected, dtype, reduction_len, reason="")
    e = np.asarray(expected, dtype=np.float64)
    o = np.asarray(oracle64, dtype=np.float64).reshape(e.shape)
    with np.errstate(invalid="ignore"):
        d = np.abs(e - o)
    d = np.where(np.isfinite(d), d, 0.0)
    p99 = float(np.percentile(d, 99)) if d.size else 0.0
    bound = np.asarray(base.bound, dtype=np.float64) + EMPIRICAL_SAFETY * (d + p99)
    alts = {
        k: np.asarray(v) + EMPIRICAL_SAFETY * (d + p99)
        for k, v in (base.alternatives or {}).items()
    }
    return Tolerance(bound, "fp64-run", "", base.rtol, base.atol, alts)


def _reference_scale(e: np.ndarray) -> float:
    """A robust magnitude of the output (for the absolute floor): the median of non-zero |e|."""
    nz = e[np.isfinite(e) & (e > 0)]
    return float(np.median(nz)) if nz.size else 1.0


class _Lazy(Mapping[str, Any]):
    """A mapping whose values are computed on first access."""

    def __init__(self, makers: dict[str, Callable[[], Any]]):
        self._makers, self._values = makers, {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            self._values[key] = self._makers[key]()
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


def derived_tolerance(
    intent: Any,
    inputs: dict[str, np.ndarray],
    scalars: dict[str, Any],
    output: str,
    out_dtype: str,
    memo: dict[str, Any] | None = None,
) -> Tolerance | None:
    """The IR-derived componentwise bound for one output, or None if the IR cannot give one.

    The evaluator bounds every output at once: ``memo`` (one per input set) keeps its results for
    the kernel's other outputs."""
    try:
        from cuda2nki.ir import evaluate
    except ImportError:
        return None
    fn = getattr(evaluate, "error_bound", None)
    if fn is None or intent is None:
        return None
    memo = {} if memo is None else memo

    def bound(key: str, **kw: float) -> dict[str, Any]:
        if key not in memo:
            memo[key] = fn(intent, inputs, scalars, **kw)
        return memo[key]

    try:
        if out_dtype.startswith(("int", "uint", "bool")):
            # an integer output is decided by comparisons and conversions, and both
            # implementations read the same stored inputs: without an input-rounding term an
            # element compared with its own row's maximum (an argmax) cannot flip
            bounds = bound("fp32 exact inputs", u_in=0.0)
        else:
            # a float output keeps the input term: it is also the slack that covers another
            # association order of the same sum
            bounds = bound("fp32")
    except Exception:  # noqa: BLE001 - an IR that cannot bound this output falls back to defaults
        return None
    if output not in bounds:
        return None
    b = np.asarray(bounds[output], dtype=np.float64) * SAFETY
    floor = subnormal_floor(inputs, "bfloat16")

    def alternative(label: str, kw: dict[str, float]) -> np.ndarray:
        try:
            alt = bound(label, **kw)
        except Exception:  # noqa: BLE001 - a hypothesis the IR cannot bound explains nothing
            return np.zeros_like(b)
        if output not in alt:
            return np.zeros_like(b)
        return np.asarray(alt[output], dtype=np.float64) * SAFETY + floor

    # evaluated only when a comparison fails (most comparisons pass within the fp32 bound)
    alts = _Lazy(
        {
            "bf16 accumulation": lambda: alternative(
                "bf16 accumulation", {"u_acc": UNIT_ROUNDOFF["bfloat16"]}
            ),
            "bf16 inputs": lambda: alternative("bf16 inputs", {"u_in": UNIT_ROUNDOFF["bfloat16"]}),
        }
    )
    return Tolerance(b, "ir", alternatives=alts)
