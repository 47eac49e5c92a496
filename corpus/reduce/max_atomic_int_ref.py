"""Reference for max_min_atomic (exact int32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    v = inputs["vals"]
    r = inputs["result"]
    return {"result": np.array([max(r[0], v.max()), min(r[1], v.min())], dtype=np.int32)}
