"""Reference for fdtd_field_row0 (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    ey = inputs["ey"].astype(np.float64)
    hz = inputs["hz"].astype(np.float64)
    coef = float(np.float32(scalars["coef"]))
    out = ey.copy()
    out[1:] = ey[1:] - coef * (hz[1:] - hz[:-1])
    out[0] = inputs["fict"][int(scalars["step"])]
    return {"ey": out.astype(np.float32)}
