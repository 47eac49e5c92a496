"""Reference for scale_shift_gridstride (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float64)
    out = x * float(scalars["scale"]) + float(scalars["shift"])
    return {"out": out.astype(np.float32)}
