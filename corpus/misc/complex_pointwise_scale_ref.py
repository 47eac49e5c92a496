"""Reference for complex_pointwise_scale: (a.re*b.re - a.im*b.im, a.re*b.im + a.im*b.re) * s."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["signal"].astype(np.float32)
    b = inputs["filter"].astype(np.float32)
    s = np.float32(scalars["scale"])
    re = a[:, 0] * b[:, 0] - a[:, 1] * b[:, 1]
    im = a[:, 0] * b[:, 1] + a[:, 1] * b[:, 0]
    return {"signal": np.stack([re * s, im * s], axis=1).astype(np.float32)}
