"""Reference for vector_norms (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x, y, z, w = (inputs[n].astype(np.float64) for n in "xyzw")
    n3 = np.sqrt(x * x + y * y + z * z)
    return {
        "len3": n3.astype(np.float32),
        "inv3": (1.0 / n3).astype(np.float32),
        "inv2": (1.0 / np.sqrt(x * x + z * z)).astype(np.float32),
        "len4": np.sqrt(x * x + y * y + z * z + w * w).astype(np.float32),
    }
