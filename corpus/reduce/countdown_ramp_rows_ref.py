"""Reference for countdown_ramp_rows."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float32)
    s = np.zeros_like(x)
    for k in range(int(scalars["n"]) - 1, -1, -1):
        s = s + x * np.float32(k + 1)
    return {"y": s.astype(np.float32)}
