"""Reference for attention_scores (float64, rounded to float32; -inf above the diagonal)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    q = inputs["Q"].astype(np.float64)
    k = inputs["K"].astype(np.float64)
    scale = float(np.float32(scalars["scale"]))
    s = np.einsum("htd,hsd->hts", q, k) * scale
    t = q.shape[1]
    mask = np.triu(np.ones((t, t), dtype=bool), k=1)
    s[:, mask] = -np.inf
    return {"S": s.astype(np.float32)}
