"""Reference for causal_scale_flat (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    s = inputs["scores"].astype(np.float32)
    t = s.shape[-1]
    future = np.triu(np.ones((t, t), dtype=bool), k=1)  # key > query
    out = np.where(future, np.float32(-np.inf), s * np.float32(scalars["scale"]))
    return {"scores": out.astype(np.float32)}
