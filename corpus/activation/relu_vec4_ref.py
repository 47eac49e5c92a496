"""Reference for relu_vec4 (float32, exact)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["src"].astype(np.float32)
    return {"dst": np.maximum(x, np.float32(0.0))}
