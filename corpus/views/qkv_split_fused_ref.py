"""Reference for qkv_split_fused (exact)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    H = int(scalars["H"])
    qkv = inputs["qkv"].astype(np.float32)
    B, T, _, D = qkv.shape
    parts = qkv.reshape(B, T, 3, H, D).transpose(2, 0, 3, 1, 4)
    return {name: np.ascontiguousarray(parts[i]) for i, name in enumerate(("q", "k", "v"))}
