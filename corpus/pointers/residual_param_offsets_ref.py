"""Reference for residual_param_offsets (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float32)
    g = inputs["g"].astype(np.float32)[None, :]
    return {"out": x * g + inputs["res"].astype(np.float32)}
