"""Reference for reduce_partials_final: out[0] = sum(partials) (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    p = inputs["partials"].astype(np.float64)
    return {"out": np.array([p.sum()], dtype=np.float32)}
