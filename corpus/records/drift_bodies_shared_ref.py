"""Reference for drift_bodies_shared (float32 position + velocity * dt, velocities kept)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    b = inputs["in"].astype(np.float32)
    dt = np.float32(scalars["dt"])
    out = b.copy()
    out[:, :3] = b[:, :3] + b[:, 3:] * dt
    return {"out": out}
