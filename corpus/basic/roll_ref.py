"""Reference for roll_1d (exact: np.roll)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"out": np.roll(inputs["in"].astype(np.float32), int(scalars["shift"]))}
