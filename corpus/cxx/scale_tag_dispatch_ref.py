"""Reference for scale_tag_dispatch (y = a * x in float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = np.float32(scalars["a"])
    return {"y": (a * inputs["x"].astype(np.float32)).astype(np.float32)}
