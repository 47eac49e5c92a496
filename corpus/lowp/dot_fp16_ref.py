"""Reference for dot_fp16: result += dot(a, b) over the fp16 values (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float64)
    b = inputs["b"].astype(np.float64)
    result = inputs["result"].astype(np.float64) + np.dot(a, b)
    return {"result": result.astype(np.float32)}
