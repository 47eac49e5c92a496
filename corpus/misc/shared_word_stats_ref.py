"""Reference for positive_stats: per-lane counts and float32 sums in the kernel's order, then
lane 0 adds the 32 partials in order."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    m = inputs["m"].astype(np.float32)
    rows, cols = m.shape
    pos = np.where(m > 0, m, np.float32(0))
    counts = (m > 0).sum(axis=1).astype(np.int32)
    lane_sum = np.zeros((rows, 32), np.float32)
    for j in range(cols):
        lane_sum[:, j % 32] = lane_sum[:, j % 32] + pos[:, j]
    total = np.zeros(rows, np.float32)
    for k in range(32):
        total = total + lane_sum[:, k]
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(counts > 0, total / counts.astype(np.float32), np.float32(0))
    return {"counts": counts, "means": means.astype(np.float32)}
