"""Reference for staged_scale_pipeline: out = alpha * in (one float32 product per element)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float32)
    return {"out": np.float32(scalars["alpha"]) * x}
