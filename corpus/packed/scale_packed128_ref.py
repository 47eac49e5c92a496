"""Reference for scale_packed128 (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float32)
    return {"out": x * np.float32(scalars["scale"]) + np.float32(scalars["shift"])}
