"""Reference for gemv_bump_row: y = A @ x (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["A"].astype(np.float64)
    x = inputs["x"].astype(np.float64)
    return {"y": (a @ x).astype(np.float32)}
