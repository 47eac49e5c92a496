"""Reference for row_mean_f64: the mean of each row in float64."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"means": inputs["mat"].astype(np.float64).mean(axis=1)}
