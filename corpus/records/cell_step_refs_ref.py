"""Reference for cell_step_refs (float64)."""

import numpy as np

GAMMA = float(np.float32(1.4))


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    rho = np.abs(inputs["rho"].astype(np.float64)) + 1.0
    mom = inputs["mom"].astype(np.float64).reshape(3, -1)
    e = np.abs(inputs["energy"].astype(np.float64)) * 4.0 + 2.0
    vel = mom / rho
    s2 = (vel**2).sum(axis=0)
    p = (GAMMA - 1.0) * (e - 0.5 * rho * s2)
    sound = np.sqrt(GAMMA * np.abs(p) / rho)
    return {"step": (0.5 / (np.sqrt(s2) + sound)).astype(np.float32)}
