"""Reference for rownorm_apply_flat (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    n, c = int(scalars["N"]), int(scalars["C"])
    x = inputs["inp"].astype(np.float64).reshape(n, c)
    m = inputs["mean"].astype(np.float64)[:, None]
    s = inputs["rstd"].astype(np.float64)[:, None]
    y = s * (x - m) * inputs["weight"].astype(np.float64) + inputs["bias"].astype(np.float64)
    return {"out": y.reshape(-1).astype(np.float32)}
