"""Reference for step_decay_rows."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float32)
    acc = np.zeros_like(x)
    for j in range(5):
        acc = acc + x * (np.float32(0.5) * np.float32(j))
    return {"out": acc.astype(np.float32)}
