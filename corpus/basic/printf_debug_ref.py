"""Reference for abs_diff_debug (float32, one rounding)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"out": np.abs(inputs["a"].astype(np.float32) - inputs["b"].astype(np.float32))}
