"""Reference for nchw_to_nhwc (exact)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"dst": np.ascontiguousarray(inputs["src"].astype(np.float32).transpose(0, 2, 3, 1))}
