"""Reference for transpose_rotated_rows (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"out": np.ascontiguousarray(inputs["in"].astype(np.float32).T)}
