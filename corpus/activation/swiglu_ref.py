"""Reference for swiglu_forward (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    h = int(scalars["H"])
    x = inputs["inp"].astype(np.float64)
    gate, up = x[:, :h], x[:, h:]
    return {"out": (gate / (1.0 + np.exp(-gate)) * up).astype(np.float32)}
