"""Reference for drop_masked_2d (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    y = inputs["y"].astype(np.float32).copy()
    a = inputs["a"].astype(np.float32)
    hit = inputs["mask"] != 0
    y[hit] = a[hit] - np.float32(1.0)
    return {"y": y}
