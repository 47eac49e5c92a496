"""Reference for scale_reversed_blocks (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float32)
    return {"y": (np.float32(scalars["a"]) * x).astype(np.float32)}
