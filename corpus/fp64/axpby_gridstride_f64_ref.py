"""Reference for axpby_gridstride_f64: z = alpha * x + beta * y in float64."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x, y = inputs["x"].astype(np.float64), inputs["y"].astype(np.float64)
    return {"z": scalars["alpha"] * x + scalars["beta"] * y}
