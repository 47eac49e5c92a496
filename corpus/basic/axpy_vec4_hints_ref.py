"""Reference for axpy_vec4_hints (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float32)
    y = inputs["y"].astype(np.float32)
    a = inputs["alpha"].astype(np.float32)[0]
    return {"z": (a * x + y).astype(np.float32)}
