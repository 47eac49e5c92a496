"""Reference for poly_eval (float64 Horner, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["xs"].astype(np.float64)
    c = inputs["coeffs"].astype(np.float64)
    y = ((c[3] * x + c[2]) * x + c[1]) * x + c[0]
    return {"ys": y.astype(np.float32)}
