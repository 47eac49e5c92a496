"""Reference for to_spherical (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x, y, z = (inputs[k].astype(np.float32) for k in ("px", "py", "pz"))
    r = np.sqrt((x * x + y * y + z * z).astype(np.float32)) + np.float32(1e-20)
    c = np.clip(z / r, -1.0, 1.0).astype(np.float64)
    f = np.float32
    return {
        "azimuth": np.arctan2(y.astype(np.float64), x).astype(f),
        "polar": np.arccos(c).astype(f),
        "elevation": (np.arcsin(c).astype(f) + np.arctan(y * f(0.5)).astype(f)).astype(f),
    }
