"""Reference for heat_step (float64 with edge replication, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    t = inputs["t_in"].astype(np.float64)
    p = np.pad(t, 1, mode="edge")
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4.0 * t
    k = float(np.float32(scalars["k"]))
    return {"t_out": (t + k * lap + inputs["power"].astype(np.float64)).astype(np.float32)}
