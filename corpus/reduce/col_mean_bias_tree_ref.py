"""Reference for col_mean_bias_tree (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    bias = inputs["bias"].astype(np.float64)
    out = x.sum(axis=0) * np.float64(np.float32(scalars["inv_rows"])) + bias
    return {"out": out.astype(np.float32)}
