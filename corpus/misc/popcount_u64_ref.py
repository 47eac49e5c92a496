"""Reference for popcount_u64 (exact: Python integers)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    bits = np.array([bin(int(v)).count("1") for v in inputs["words"].ravel()], dtype=np.int32)
    return {"counts": (bits * (1 + 128 + 16384)).astype(np.int32)}
