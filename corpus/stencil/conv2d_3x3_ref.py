"""Reference for conv2d_3x3: zero-padded 3x3 cross-correlation (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    img = inputs["img"].astype(np.float64)
    f = inputs["filt"].astype(np.float64)
    h, w = img.shape
    p = np.zeros((h + 2, w + 2))
    p[1:-1, 1:-1] = img
    out = np.zeros((h, w))
    for dy in range(3):
        for dx in range(3):
            out += f[dy, dx] * p[dy : dy + h, dx : dx + w]
    return {"res": out.astype(np.float32)}
