"""Reference for mm_scaled_rows_x (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    return {"tmp": (scalars["alpha"] * (a @ b)).astype(np.float32)}
