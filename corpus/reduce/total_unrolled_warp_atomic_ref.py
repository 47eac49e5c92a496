"""Reference for total_unrolled_warp_atomic: total += sum(src) (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["src"].astype(np.float64)
    total = inputs["total"].astype(np.float64) + x.sum()
    return {"total": total.astype(np.float32)}
