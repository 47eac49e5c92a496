"""Reference for layernorm_nullable (float64, biased variance, eps = 1e-5; rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float64)
    w = inputs["weight"].astype(np.float64)
    b = inputs["bias"].astype(np.float64)
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1.0 / np.sqrt(var + 1e-5)
    out = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
    return {
        "out": out.astype(np.float32),
        "mean": mean.astype(np.float32),
        "rstd": rstd.astype(np.float32),
    }
