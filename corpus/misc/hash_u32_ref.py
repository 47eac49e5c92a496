"""Reference for hash_u32 (exact: Python integers masked to 32 bits)."""

import numpy as np

MASK = 0xFFFFFFFF


def _mix32(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & MASK
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & MASK
    return h ^ (h >> 16)


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    keys = inputs["keys"].astype(np.uint64)
    seed = np.uint64(int(scalars["seed"]) & MASK)
    return {"hashes": (_mix32(keys ^ seed) % 1000003).astype(np.uint32)}
