"""Reference for act_kernel_fnarg (float64 SiLU times 2)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    return {"y": (2.0 * x / (1.0 + np.exp(-x))).astype(np.float32)}
