"""Reference for particle_shift_members (x moved by dx; speed = y * cell + z, float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["ps_x"].astype(np.float32)
    y, z = inputs["ps_y"].astype(np.float32), inputs["ps_z"].astype(np.float32)
    cell = inputs["ps_cell"].astype(np.float32)
    return {"ps_x": x + np.float32(scalars["dx"]), "speed": y * cell + z}
