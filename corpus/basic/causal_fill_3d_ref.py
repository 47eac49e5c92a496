"""Reference for causal_fill_3d (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["att"].astype(np.float32)
    t = x.shape[-1]
    keep = np.tril(np.ones((t, t), dtype=bool))
    out = np.where(keep, x + np.float32(scalars["shift"]), np.float32(scalars["fill"]))
    return {"out": out.astype(np.float32)}
