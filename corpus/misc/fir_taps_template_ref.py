"""Reference for fir_taps_template: correlation with the fixed taps, the window cut at the
signal's end (float64 -> float32)."""

import numpy as np

TAPS = np.array([0.05, 0.1, 0.2, 0.3, 0.2, 0.1, 0.05], dtype=np.float32).astype(np.float64)


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    n = x.shape[0]
    padded = np.concatenate([x, np.zeros(len(TAPS))])
    out = np.zeros(n)
    for t in range(len(TAPS)):
        out += TAPS[t] * padded[t : t + n]
    return {"y": out.astype(np.float32)}
