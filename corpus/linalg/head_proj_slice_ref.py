"""Reference for head_proj_slice (float64, rounded to float32): only head `head` changes."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    h = int(scalars["head"])
    out = inputs["y"].copy()
    prod = inputs["x"][h].astype(np.float64) @ inputs["w"].astype(np.float64)
    out[h] = prod.astype(np.float32)
    return {"y": out}
