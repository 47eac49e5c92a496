"""Reference for scale_deduced (float32 products of the bf16 inputs, rounded to bfloat16)."""

import ml_dtypes
import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    y = inputs["inp"].astype(np.float32) * inputs["gain"].astype(np.float32)[:, None]
    return {"out": y.astype(ml_dtypes.bfloat16)}
