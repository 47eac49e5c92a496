"""Reference for add_bias_2d (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float32)
    bias = inputs["bias"].astype(np.float32)
    return {"out": x + bias[None, :]}
