"""Reference for tap_bias_inclusive."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["src"].astype(np.float32)
    total = np.zeros_like(a)
    for t in range(int(scalars["ntap"])):
        total = total + (a + np.float32(t))
    return {"dst": total.astype(np.float32)}
