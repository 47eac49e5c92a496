"""Reference for exponent_of: the biased exponent field minus 127 and the sign bit."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    w = inputs["x"].astype(np.float32).view(np.uint32).astype(np.int64)
    expo = ((w >> 23) & 0xFF) - 127
    return {"expo": expo.astype(np.int32), "negative": (w >> 31).astype(np.int32)}
