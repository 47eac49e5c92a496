"""Reference for sgemm_tiled32 (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    c = inputs["C"].astype(np.float64)
    out = float(scalars["alpha"]) * (a @ b) + float(scalars["beta"]) * c
    return {"C": out.astype(np.float32)}
