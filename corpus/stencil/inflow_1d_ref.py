"""Reference for upwind_inflow (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    q = inputs["q"].astype(np.float64)
    flux = inputs["flux"].astype(np.float64)
    r = float(np.float32(scalars["dt_dx"]))
    out = q.copy()
    out[1:] = q[1:] - r * (flux[1:] - flux[:-1])
    out[0] = inputs["inflow"][int(scalars["step"])]
    return {"q": out.astype(np.float32)}
