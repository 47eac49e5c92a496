"""Reference for nn_distance (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    loc = inputs["locations"].astype(np.float64)
    dlat = float(np.float32(scalars["lat"])) - loc[:, 0]
    dlng = float(np.float32(scalars["lng"])) - loc[:, 1]
    return {"distances": np.sqrt(dlat * dlat + dlng * dlng).astype(np.float32)}
