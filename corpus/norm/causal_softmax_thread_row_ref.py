"""Reference for causal_softmax_thread_row (softmax in float64 over keys k <= t, zeros above
the diagonal; rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["preatt"].astype(np.float64)
    t = x.shape[-1]
    visible = np.tril(np.ones((t, t), dtype=bool))
    x = np.where(visible, x, -np.inf)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return {"att": (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)}
