"""Reference for syrk_flat (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float64)
    c = inputs["c"].astype(np.float64)
    out = scalars["ALPHA"] * (a @ a.T) + scalars["BETA"] * c
    return {"c": out.astype(np.float32)}
