"""Reference for star_advance_local (position += speed * dt, speed halved, kinetic term, id + 1, weight + dt)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    at = inputs["stars_at"].astype(np.float32).reshape(-1, 3)
    v = inputs["stars_speed"].astype(np.float32).reshape(-1, 3)
    w = inputs["stars_weight"].astype(np.float32)
    dt = np.float32(scalars["dt"])
    h = v * np.float32(0.5)
    ke = w * (h[:, 0] * h[:, 0] + h[:, 1] * h[:, 1] + h[:, 2] * h[:, 2])
    return {
        "stars_at": at + v * dt,
        "stars_speed": h,
        "stars_weight": w + dt,
        "stars_id": inputs["stars_id"].astype(np.int32) + 1,
        "ke": ke,
    }
