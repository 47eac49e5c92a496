"""Reference for matmul_lockstep (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a, b = inputs["A"].astype(np.float64), inputs["B"].astype(np.float64)
    return {"C": (a @ b).astype(np.float32)}
