"""Reference for matrix_axpby_ld (float64, rounded to float32; padding columns copied)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    cols = int(scalars["cols"])
    out = b.copy()
    out[:, :cols] = float(scalars["alpha"]) * a[:, :cols] + float(scalars["beta"]) * b[:, :cols]
    return {"B": out.astype(np.float32)}
