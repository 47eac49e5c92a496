"""Reference for scale_half2: fp16 product (float32 math on the fp16 values, rounded to fp16)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["data"].astype(np.float32)
    f = np.float32(np.float16(scalars["factor"]))
    return {"data": (x * f).astype(np.float16)}
