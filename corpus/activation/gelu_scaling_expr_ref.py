"""Reference for gelu_forward_rows (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float64)
    inner = np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)
    return {"out": (0.5 * x * (1.0 + np.tanh(inner))).astype(np.float32)}
