"""Reference for apply_activation (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["data"].astype(np.float64)
    mode = int(scalars["mode"])
    slope = float(np.float32(scalars["slope"]))
    if mode == 0:
        y = np.where(x > 0, x, 0.0)
    elif mode == 1:
        y = np.where(x > 0, x, slope * x)
    elif mode == 2:
        y = np.tanh(x)
    else:
        y = x
    return {"data": y.astype(np.float32)}
