"""Reference for scale_shift_optional (float32, exact: one multiply then one add)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float32)
    y = x * inputs["scale"].astype(np.float32)[None, :]
    return {"y": y + inputs["shift"].astype(np.float32)[None, :]}
