"""Reference for point_mass_energy (0.5 * mass * |pos|^2, float32, summed x, y, z in order)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    pos = inputs["pts_pos"].astype(np.float32).reshape(-1, 3)
    mass = inputs["pts_mass"].astype(np.float32)
    r2 = pos[:, 0] * pos[:, 0] + pos[:, 1] * pos[:, 1] + pos[:, 2] * pos[:, 2]
    return {"energy": np.float32(0.5) * mass * r2}
