"""Reference for step_proj_mid (float64, rounded to float32): only step t changes."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    t = int(scalars["t"])
    out = inputs["y"].copy()
    x = inputs["x"][:, t, :].astype(np.float64)
    w = inputs["W"].astype(np.float64)
    out[:, t, :] = (x @ w.T + inputs["bias"].astype(np.float64)).astype(np.float32)
    return {"y": out}
