"""Reference for transpose_colmajor_f64: dst = src^T (the transpose is the same either way)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"dst": np.ascontiguousarray(inputs["src"].T)}
