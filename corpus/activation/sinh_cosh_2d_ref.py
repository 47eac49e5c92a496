"""Reference for hyperbolic_pair (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    v = float(np.float32(scalars["scale"])) * inputs["a"].astype(np.float64)
    return {
        "sh": np.sinh(v).astype(np.float32),
        "th": (np.sinh(v) / np.cosh(v)).astype(np.float32),
    }
