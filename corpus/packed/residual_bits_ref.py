"""Reference for residual_bits (float32 sum of the bf16 inputs, rounded to bfloat16)."""

import ml_dtypes
import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    s = inputs["a"].astype(np.float32) + inputs["b"].astype(np.float32)
    return {"out": s.astype(ml_dtypes.bfloat16)}
