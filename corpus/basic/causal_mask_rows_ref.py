"""Reference for causal_mask_rows (float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["logits"].astype(np.float32)
    t = x.shape[-1]
    keep = np.tril(np.ones((t, t), dtype=bool))  # key <= query
    out = np.where(keep, x * np.float32(scalars["inv_temp"]), np.float32(-1.0e9))
    return {"masked": out.astype(np.float32)}
