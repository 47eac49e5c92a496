"""Reference for vector_add (float32: the sum of two fp32 values is rounded once, as in CUDA)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float32)
    b = inputs["b"].astype(np.float32)
    return {"out": a + b}
