"""Reference for texture_resample: bilinear filtering as the texture unit does it (CUDA
programming guide, texture fetching): texel coordinates in float32, weights rounded to 8
fractional bits, indices clamped to the image; the weighted sum in float64."""

import numpy as np


def _taps(coord: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b = (coord - np.float32(0.5)).astype(np.float32)
    lo = np.floor(b)
    alpha = np.floor((b - lo).astype(np.float32) * 256.0 + 0.5) / 256.0
    i = lo.astype(np.int64)
    return np.clip(i, 0, n - 1), np.clip(i + 1, 0, n - 1), alpha


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    img = inputs["src"].astype(np.float64)
    h, w = img.shape
    ow, oh = int(scalars["out_w"]), int(scalars["out_h"])
    sx, sy = np.float32(scalars["step_x"]), np.float32(scalars["step_y"])
    u = ((np.arange(ow, dtype=np.float32) + np.float32(0.5)) * sx).astype(np.float32)
    v = ((np.arange(oh, dtype=np.float32) + np.float32(0.5)) * sy).astype(np.float32)
    x0, x1, a = _taps(u, w)
    y0, y1, b = _taps(v, h)
    a, b = a[None, :], b[:, None]
    top = (1 - a) * img[y0][:, x0] + a * img[y0][:, x1]
    bottom = (1 - a) * img[y1][:, x0] + a * img[y1][:, x1]
    return {"resized": ((1 - b) * top + b * bottom).astype(np.float32)}
