"""Reference for sgemm_bumped_smem (float64 alpha * A @ B + beta * C, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    c = inputs["C"].astype(np.float64)
    out = scalars["alpha"] * (a @ b) + scalars["beta"] * c
    return {"C": out.astype(np.float32)}
