"""Reference for histogram_shared: hist += bincount(keys) (exact int32 arithmetic)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    keys = inputs["keys"].astype(np.int64)
    hist = inputs["hist"].astype(np.int64)
    counts = np.bincount(keys, minlength=hist.shape[0])
    return {"hist": (hist + counts).astype(np.int32)}
