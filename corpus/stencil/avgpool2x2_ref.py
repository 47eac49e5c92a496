"""Reference for avgpool2x2 (float64 -> float32; odd trailing row/column dropped)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float64)
    c, h, w = x.shape
    x = x[:, : h // 2 * 2, : w // 2 * 2]
    pooled = x.reshape(c, h // 2, 2, w // 2, 2).mean(axis=(2, 4))
    return {"out": pooled.astype(np.float32)}
