"""Reference for causal_softmax_future_first (scores scaled in float32 as in the kernel, softmax
in float64 over keys c <= pos, zeros above the diagonal; rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = (inputs["in"].astype(np.float32) * np.float32(scalars["inv_temp"])).astype(np.float64)
    t = x.shape[-1]
    visible = np.tril(np.ones((t, t), dtype=bool))
    x = np.where(visible, x, -np.inf)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return {"out": (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)}
