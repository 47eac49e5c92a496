"""Reference for rmsnorm_floatx (float64 on the bf16 values, eps = 1e-5, rounded to bfloat16)."""

import ml_dtypes
import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float64)
    w = inputs["weight"].astype(np.float64)
    r = 1.0 / np.sqrt((x * x).mean(axis=1) + 1e-5)
    out = x * r[:, None] * w[None, :]
    return {"out": out.astype(np.float32).astype(ml_dtypes.bfloat16)}
