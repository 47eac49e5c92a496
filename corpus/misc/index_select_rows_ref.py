"""Reference for index_select_rows (exact gather; negative indices wrap as in NumPy)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    src = inputs["src"].astype(np.float32)
    idx = inputs["index"].astype(np.int64)
    return {"out": src[idx]}
