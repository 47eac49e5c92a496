"""Reference for normalize_grid_sync: total += sum(data); data /= total (float64, then float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    data = inputs["data"].astype(np.float64)
    total = inputs["total"].astype(np.float64)[0] + data.sum()
    return {
        "data": (data / total).astype(np.float32),
        "total": np.array([total], dtype=np.float32),
    }
