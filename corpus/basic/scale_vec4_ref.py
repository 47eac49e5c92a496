"""Reference for scale_vec4 (float32; a product of two fp32 values rounds once)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float32)
    return {"out": x * np.float32(scalars["s"])}
