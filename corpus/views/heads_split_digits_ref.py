"""Reference for heads_split_digits (exact)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"heads": np.ascontiguousarray(inputs["act"].astype(np.float32).transpose(0, 2, 1, 3))}
