"""Reference for cgemm_planes (complex128, rounded to float32 planes)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["ar"].astype(np.float64) + 1j * inputs["ai"].astype(np.float64)
    b = inputs["br"].astype(np.float64) + 1j * inputs["bi"].astype(np.float64)
    c = a @ b
    return {"cr": c.real.astype(np.float32), "ci": c.imag.astype(np.float32)}
