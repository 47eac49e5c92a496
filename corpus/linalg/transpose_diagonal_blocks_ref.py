"""Reference for transpose_diagonal_blocks (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"dst": np.ascontiguousarray(inputs["src"].astype(np.float32).T)}
