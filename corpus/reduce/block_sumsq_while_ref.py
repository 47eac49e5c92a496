"""Reference for block_sumsq_while: block b of 6 (64 threads) sums the squares of the elements
k * 384 + b * 64 + t (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["v"].astype(np.float64)
    blocks, threads = 6, 64
    trips = -(-x.shape[0] // (blocks * threads))
    padded = np.zeros(trips * blocks * threads, dtype=np.float64)
    padded[: x.shape[0]] = x
    sums = (padded.reshape(trips, blocks, threads) ** 2).sum(axis=(0, 2))
    return {"block_out": sums.astype(np.float32)}
