"""Reference for softmax_online_double (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["logits"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"probs": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}
