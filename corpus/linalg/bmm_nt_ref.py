"""Reference for bmm_nt (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    return {"C": np.einsum("bmk,bnk->bmn", a, b).astype(np.float32)}
