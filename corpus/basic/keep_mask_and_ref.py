"""Reference for keep_mask_and (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    out = inputs["out"].astype(np.float32).copy()
    x = inputs["x"].astype(np.float32)
    kept = inputs["keep"] > np.float32(0.5)
    out[kept] = x[kept] * np.float32(scalars["scale"])
    return {"out": out}
