"""Reference for matmul_forward_bias (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float64)
    w = inputs["weight"].astype(np.float64)
    b = inputs["bias"].astype(np.float64)
    return {"out": (x @ w.T + b[None, :]).astype(np.float32)}
