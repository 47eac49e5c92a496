"""Reference for gemv_lockstep (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a, x = inputs["A"].astype(np.float64), inputs["x"].astype(np.float64)
    return {"y": (a @ x).astype(np.float32)}
