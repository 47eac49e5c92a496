"""Reference for bias_grad_merged (float64 sums, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    d = inputs["dout"].astype(np.float64)
    total = inputs["dbias"].astype(np.float64) + d.sum(axis=(0, 1))
    return {"dbias": total.astype(np.float32)}
