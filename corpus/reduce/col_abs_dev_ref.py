"""Reference for col_abs_dev (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float64)
    d = np.abs(a - inputs["center"].astype(np.float64)[None, :])
    out = inputs["scale"].astype(np.float64) * d.sum(axis=0)
    return {"out": out.astype(np.float32)}
