"""Reference for rope_forward. The angle is formed in float32 exactly as the kernel does (its
rounding is part of the kernel's meaning); the rotation is float64, rounded to float32."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float64)
    t_len, _, d = x.shape
    p = np.arange(d // 2, dtype=np.float32)
    expo = (np.float32(-2.0) * p / np.float32(d)).astype(np.float32)
    freq = np.power(np.float32(scalars["theta"]), expo).astype(np.float32)
    ang = (np.arange(t_len, dtype=np.float32)[:, None] * freq[None, :]).astype(np.float64)
    c = np.cos(ang)[:, None, :]
    s = np.sin(ang)[:, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return {"out": out.astype(np.float32)}
