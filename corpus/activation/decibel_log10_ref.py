"""Reference for to_decibel (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    p = inputs["power"].astype(np.float64) + float(np.float32(scalars["eps"]))
    d = 10.0 * np.log10(p)
    return {"db": d.astype(np.float32), "back": (10.0 ** (0.1 * d)).astype(np.float32)}
