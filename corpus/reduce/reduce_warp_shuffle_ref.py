"""Reference for reduce_warp_shuffle: total += sum(x) (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    total = inputs["total"].astype(np.float64) + x.sum()
    return {"total": total.astype(np.float32)}
