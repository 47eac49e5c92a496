"""Reference for argmax_rows (exact: first index of the row maximum)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"out_idx": inputs["logits"].astype(np.float32).argmax(axis=1).astype(np.int32)}
