"""Reference for col_grad_accum_tree (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    g = inputs["g"].astype(np.float64)
    grad = inputs["grad"].astype(np.float64)
    return {"grad": (grad + g.sum(axis=0)).astype(np.float32)}
