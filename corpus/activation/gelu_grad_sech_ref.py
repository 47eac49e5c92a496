"""Reference for gelu_grad_sech (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float64)
    k, c = 0.7978845608, 0.044715
    u = k * (x + c * x**3)
    sech2 = 1.0 / np.cosh(u) ** 2
    local = 0.5 * (1.0 + np.tanh(u)) + 0.5 * x * sech2 * k * (1.0 + 3.0 * c * x * x)
    out = inputs["dinp"].astype(np.float64) + local * inputs["dout"].astype(np.float64)
    return {"dinp": out.astype(np.float32)}
