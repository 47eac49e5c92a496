"""Reference for gelu_bf16_packed (float64 on the bf16 inputs, rounded to bfloat16)."""

import ml_dtypes
import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    y = 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))
    return {"y": y.astype(np.float32).astype(ml_dtypes.bfloat16)}
