"""Reference for bias_gelu_erf (float64 erf GELU on the fp32 sum, rounded to float32)."""

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = (inputs["inp"].astype(np.float32) + inputs["bias"].astype(np.float32)[None, :]).astype(
        np.float64
    )
    return {"out": (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(np.float32)}
