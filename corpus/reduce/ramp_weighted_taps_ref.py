"""Reference for ramp_weighted_taps."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    src = inputs["src"].astype(np.float32)
    acc = np.zeros_like(src)
    for k in range(3):
        acc = acc + src * np.float32(k + 1)
    return {"dst": acc.astype(np.float32)}
