"""Reference for gesummv (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    x = inputs["x"].astype(np.float64)
    t = a @ x
    y = float(np.float32(scalars["alpha"])) * t + float(np.float32(scalars["beta"])) * (b @ x)
    return {"y": y.astype(np.float32), "tmp": t.astype(np.float32)}
