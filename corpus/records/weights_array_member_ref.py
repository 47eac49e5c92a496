"""Reference for weights_array_member (w[0] = (w0 + w1 + w2 + w3) * tag, float32 in order)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    w = inputs["taps_w"].astype(np.float32).reshape(-1, 4).copy()
    s = np.zeros(w.shape[0], np.float32)
    for q in range(4):
        s = s + w[:, q]
    w[:, 0] = s * inputs["taps_tag"].astype(np.float32)
    return {"taps_w": w}
