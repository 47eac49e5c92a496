"""Reference for jacobi2d_shared (float64 -> float32; boundary copied)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float64)
    b = a.copy()
    b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    return {"b": b.astype(np.float32)}
