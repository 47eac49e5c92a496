"""Reference for convert_deduced (float64 tanh GELU of the fp16 sum)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["a"].astype(np.float32) + inputs["b"].astype(np.float32)
    x = x.astype(np.float64)
    y = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))
    return {"y": y.astype(np.float32)}
