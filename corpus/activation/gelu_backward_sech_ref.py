"""Reference for gelu_backward_sech (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float64)
    k = 0.7978845608028654
    u = k * (x + 0.044715 * x**3)
    grad = 0.5 * (1.0 + np.tanh(u)) + 0.5 * x / np.cosh(u) ** 2 * k * (1.0 + 0.134145 * x * x)
    return {"dinp": (grad * inputs["dout"].astype(np.float64)).astype(np.float32)}
