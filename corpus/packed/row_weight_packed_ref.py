"""Reference for row_weight_packed (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"out": inputs["inp"].astype(np.float32) * inputs["w"].astype(np.float32)[None, :]}
