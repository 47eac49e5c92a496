"""Conditioning of a kernel measured where no IR bound exists: perturbed fp64 runs.

Without an IR-derived bound, check's tolerance is the per-dtype default widened by the CUDA
kernel's own measured error (``|fp32 run - fp64 run|``, :func:`~.tolerance.empirical_tolerance`).
That measures how far *this* fp32 evaluation happened to land, element by element: in an
ill-conditioned kernel (a recurrence whose state grows by ``exp(dt * A) > 1`` per step and
whose output sums that state with cancelling signs) the kernel's rounding may land close by
luck while another, equally valid order of roundings -- a port's engines, another ``exp`` --
lands far off.

Backward-error view: an fp32 evaluation of a stable algorithm is the exact result for inputs
perturbed by a few fp32 roundings.  So the kernel's sensitivity to such a perturbation bounds
the spread of valid fp32 results: run the kernel in fp64 on inputs moved by one fp32 ulp each
(random direction, ``TRIALS`` draws) and take the largest change of each output element.  A port
within ``tolerance + own rounding + SAFETY * sensitivity`` of the fp64 result is as accurate as
the problem allows at that element; a defect (a wrong index, a missing term) moves outputs by
far more than the inputs' last bits do, and still fails.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np

from cuda2nki.fidelity.compare import Comparison, within

#: perturbed runs per comparison (the largest change is kept)
TRIALS = 2
#: safety factor on the measured sensitivity (a port's roundings are a few ulps, not one)
SAFETY = 4.0


def perturbed(
    arrays: Mapping[str, np.ndarray], inputs: set[str], seed: int
) -> dict[str, np.ndarray]:
    """``arrays`` with every element of the float ``inputs`` moved by one ulp (float32) or by a
    relative 2^-24 (float64), up or down at random; other arrays unchanged."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, a in arrays.items():
        a = np.asarray(a)
        if name not in inputs or a.dtype not in (np.float32, np.float64) or a.size == 0:
            out[name] = a
            continue
        up = rng.random(a.shape) < 0.5
        if a.dtype == np.float32:
            out[name] = np.where(up, np.nextafter(a, np.float32(np.inf)), np.nextafter(a, -np.inf))
        else:
            out[name] = a * np.where(up, 1.0 + 2.0**-24, 1.0 - 2.0**-24)
    return out


def sensitivity(
    run64: Callable[[dict[str, np.ndarray]], Mapping[str, np.ndarray] | None],
    arrays: Mapping[str, np.ndarray],
    inputs: set[str],
    output: str,
    base: np.ndarray,
) -> np.ndarray | None:
    """Largest change of ``output`` over ``TRIALS`` fp64 runs on perturbed inputs (None when a
    run fails); infinite where a perturbed run turns a finite element non-finite or back."""
    worst = None
    b = np.asarray(base, dtype=np.float64)
    for trial in range(TRIALS):
        out = run64(perturbed(arrays, inputs, 7919 + trial))
        if out is None or output not in out or np.size(out[output]) != b.size:
            return None
        y = np.asarray(out[output], dtype=np.float64).reshape(b.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.abs(y - b)
        same = (np.isnan(y) & np.isnan(b)) | (np.isinf(y) & (y == b))
        d = np.where(same, 0.0, np.where(np.isfinite(d), d, np.inf))
        worst = d if worst is None else np.maximum(worst, d)
    return worst


def settle(
    c: Comparison,
    got: np.ndarray,
    ref: np.ndarray,
    exact: np.ndarray | None,
    bound: np.ndarray | float,
    sens: np.ndarray | None,
) -> Comparison:
    """``c`` as expected variation when the port lies within ``bound`` plus the kernel's own
    rounding plus ``SAFETY`` times its measured sensitivity of the fp64 result ``exact``."""
    if (
        exact is None
        or sens is None
        or np.size(exact) != np.size(ref)
        or np.size(got) != np.size(ref)
    ):
        return c
    e = np.asarray(ref, dtype=np.float64)
    x = np.asarray(exact, dtype=np.float64).reshape(e.shape)
    g = np.asarray(got, dtype=np.float64).reshape(e.shape)
    s = np.asarray(sens, dtype=np.float64).reshape(e.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        own = np.abs(e - x)
    own = np.where(np.isfinite(own), own, 0.0)
    if not within(g, x, np.asarray(bound, dtype=np.float64) + own + SAFETY * s).all():
        return c
    outside = ~within(g, x, np.asarray(bound, dtype=np.float64) + own)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        rel = np.where(outside & (np.abs(x) > 0), s / np.abs(x), 0.0)
    worst = float(np.nanmax(np.where(np.isfinite(rel), rel, 0.0), initial=0.0))
    return dataclasses.replace(
        c,
        classification="expected",
        defect=None,
        evidence=f"{c.evidence}; but the kernel is ill-conditioned there: moving each input by "
        f"one float32 ulp moves these outputs by up to {worst:.3g} relative in the fp64 "
        "evaluation, and the port is within that spread of it (another valid order of "
        "roundings, not a defect)",
    )
