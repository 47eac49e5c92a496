"""Reference for nn_latlong_typedef (float64 distances; exact-latitude records use |dlng|)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    loc = inputs["d_locations"].astype(np.float64)
    lat, lng = float(np.float32(scalars["lat"])), float(np.float32(scalars["lng"]))
    d = np.sqrt((loc[:, 0] - lat) ** 2 + (loc[:, 1] - lng) ** 2)
    d = np.where(loc[:, 0] == lat, np.abs(loc[:, 1] - lng), d)
    return {"d_distances": d.astype(np.float32)}
