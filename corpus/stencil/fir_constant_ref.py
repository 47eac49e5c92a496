"""Reference for fir_constant: valid correlation with the fixed taps (float64 -> float32)."""

import numpy as np

TAPS = np.array([0.02, 0.05, 0.1, 0.15, 0.36, 0.15, 0.1, 0.05, 0.02], dtype=np.float32).astype(
    np.float64
)


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["signal"].astype(np.float64)
    m = x.shape[0] - 8
    out = np.zeros(m)
    for t in range(9):
        out += TAPS[t] * x[t : t + m]
    return {"filtered": out.astype(np.float32)}
