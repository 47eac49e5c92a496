"""Reference for nll_gather (float64 log of the gathered probability, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    t = inputs["targets"].astype(np.int64)
    p = inputs["probs"].astype(np.float64).reshape(*t.shape, int(scalars["V"]))
    picked = np.take_along_axis(p, t[..., None], axis=-1)[..., 0]
    return {"losses": (-np.log(picked)).astype(np.float32)}
