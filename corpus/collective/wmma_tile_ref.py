"""Reference for wmma_gemm: c = a @ b from fp16 inputs (exact products, float64 sums, float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float64)
    b = inputs["b"].astype(np.float64)
    return {"c": (a @ b).astype(np.float32)}
