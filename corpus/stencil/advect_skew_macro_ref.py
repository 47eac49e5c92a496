"""Reference for advect_skew_macro (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    u = inputs["u"].astype(np.float64)
    out = inputs["u_new"].astype(np.float64).copy()
    r, n = u.shape
    c = np.float64(np.float32(scalars["c"]))
    if r > 2:
        d = u[2:, 0 : n - 4] - u[:-2, 4:n]
        out[1:-1, 2:-2] = u[1:-1, 2:-2] - c * d
    return {"u_new": out.astype(np.float32)}
