"""Reference for stencil_1d: out[i] = sum_j w[j] * in[i + j - 3], zero outside (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float64)
    w = inputs["w"].astype(np.float64)
    n = x.shape[0]
    padded = np.concatenate([np.zeros(3), x, np.zeros(3)])
    out = np.zeros(n)
    for j in range(7):
        out += w[j] * padded[j : j + n]
    return {"out": out.astype(np.float32)}
