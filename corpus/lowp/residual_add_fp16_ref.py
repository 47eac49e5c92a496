"""Reference for residual_add_fp16 (float32 sum of the fp16 values, rounded to float16)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float32)
    r = inputs["residual"].astype(np.float32)
    return {"out": (x + r).astype(np.float16)}
