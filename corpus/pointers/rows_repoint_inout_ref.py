"""Reference for rows_repoint_inout (float32, exact)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float32) * np.float32(scalars["alpha"])
    return {"a": a, "b": inputs["b"].astype(np.float32) + np.float32(1.0)}
