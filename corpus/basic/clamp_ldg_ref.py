"""Reference for clamp_ldg (float32, exact)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float32)
    lo = np.float32(scalars["lo"])
    hi = np.float32(scalars["hi"])
    return {"y": np.minimum(np.maximum(x, lo), hi)}
