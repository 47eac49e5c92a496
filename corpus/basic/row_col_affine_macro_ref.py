"""Reference for row_col_affine_macro (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64).reshape(-1, 96)
    y = x * inputs["rowscale"].astype(np.float64)[:, None] - inputs["colshift"].astype(np.float64)
    return {"y": y.reshape(-1).astype(np.float32)}
