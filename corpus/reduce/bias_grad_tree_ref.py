"""Reference for bias_grad_tree (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    dout = inputs["dout"].astype(np.float64)
    dbias = inputs["dbias"].astype(np.float64)
    return {"dbias": (dbias + dout.sum(axis=0)).astype(np.float32)}
