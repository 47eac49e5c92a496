"""Reference for softmax_grad_stride."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    B, T, V = int(scalars["B"]), int(scalars["T"]), int(scalars["V"])
    p = inputs["p"].astype(np.float32).reshape(B, T, V)
    hit = (np.arange(V)[None, None, :] == inputs["tgt"][:, :, None]).astype(np.float32)
    grad = (p - hit) * inputs["dloss"].astype(np.float32)[:, :, None]
    return {"dx": (inputs["dx"].astype(np.float32) + grad.reshape(-1)).astype(np.float32)}
