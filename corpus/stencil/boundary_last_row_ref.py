"""Reference for relax_last_row (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    u = inputs["u"].astype(np.float64)
    w = inputs["w"].astype(np.float64)
    rate = float(np.float32(scalars["rate"]))
    out = u + 0.0
    out[:-1] = u[:-1] + rate * (w[1:] - w[:-1])
    out[-1] = inputs["wall"][int(scalars["k"])]
    return {"u": out.astype(np.float32)}
