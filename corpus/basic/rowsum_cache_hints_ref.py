"""Reference for rowsum_cache_hints (float64 sums, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float64)
    b = inputs["b"].astype(np.float64)
    s = inputs["rowscale"].astype(np.float64)
    return {"norms": ((a * b).sum(axis=1) * s).astype(np.float32)}
