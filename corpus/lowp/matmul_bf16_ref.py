"""Reference for matmul_bf16 (float64 product of the bf16 inputs, rounded to bfloat16)."""

import ml_dtypes
import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    return {"C": (a @ b).astype(np.float32).astype(ml_dtypes.bfloat16)}
