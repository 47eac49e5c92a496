"""Reference for sum_atomic: acc += sum(values) (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    values = inputs["values"].astype(np.float64)
    acc = inputs["acc"].astype(np.float64) + values.sum()
    return {"acc": acc.astype(np.float32)}
