"""Reference for sum_smem_accum_atomic: the total added to what ``total`` held."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    total = inputs["total"].astype(np.float64) + inputs["in"].astype(np.float64).sum()
    return {"total": total}
