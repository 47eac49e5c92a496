"""Reference for newton_sqrt: the same fp32 recurrence in NumPy float32, vectorised with masks
(the iteration count is exact only if the arithmetic matches CUDA fp32 rounding step by step)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["x"].astype(np.float32)
    half = np.float32(0.5)
    tol = np.float32(1e-6)
    r = np.where(a > 1, a, np.float32(1.0)).astype(np.float32)
    it = np.zeros(a.shape, dtype=np.int32)
    active = np.ones(a.shape, dtype=bool)
    while active.any():
        prev = r.copy()
        r = np.where(active, half * (r + a / r), r).astype(np.float32)
        it = it + active
        active = active & (np.abs(r - prev) > tol * r) & (it < 60)
    return {"roots": r, "iters": it.astype(np.int32)}
