"""Reference for fdtd_field_col0 (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    ex = inputs["ex"].astype(np.float64)
    hz = inputs["hz"].astype(np.float64)
    coef = float(np.float32(scalars["coef"]))
    out = ex.copy()
    out[:, 1:] = ex[:, 1:] - coef * (hz[:, 1:] - hz[:, :-1])
    out[:, 0] = inputs["src"][int(scalars["t"])]
    return {"ex": out.astype(np.float32)}
