"""Reference for step_weight_runtime_rows."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float32)
    acc = np.zeros_like(x)
    for j in range(int(scalars["steps"])):
        acc = acc + x * (np.float32(0.5) * np.float32(j))
    return {"out": acc.astype(np.float32)}
