"""Reference for bias_add_nullable (float32, exact)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float32)
    return {"out": x + inputs["bias"].astype(np.float32)[None, :]}
