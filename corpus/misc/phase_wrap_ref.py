"""Reference for wrap_phases (exact remainders in float64, rounded to float32)."""

import math

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    f = np.float32
    ph = inputs["phase"].astype(f).astype(np.float64)
    vel = inputs["velocity"].astype(f)
    period = float(f(scalars["period"]))
    two_pi = float(f(6.28318530718))
    finite = np.isfinite(ph)
    safe = np.where(finite, ph, 0.0)
    wrapped = np.copysign(np.abs(np.fmod(safe, two_pi)), vel).astype(f)
    half = (safe.astype(f) * f(0.5)).astype(np.float64)
    rem = np.array([math.remainder(v, period) for v in safe]).astype(f)
    centred = (rem + np.fmod(half, 1.0).astype(f)).astype(f)
    flags = np.where(np.signbit(vel), -1, 0).astype(np.int32)
    flags = np.where(finite, flags, np.where(np.isnan(ph), 2, 1)).astype(np.int32)
    return {
        "wrapped": np.where(finite, wrapped, f(0)),
        "centred": np.where(finite, centred, f(0)),
        "flags": flags,
    }
