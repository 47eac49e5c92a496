"""Reference for scale_t<__nv_bfloat16> (fp32 product of the bf16 value and the fp32 scale,
rounded to bfloat16)."""

import ml_dtypes
import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float32)
    return {"out": (x * np.float32(scalars["s"])).astype(ml_dtypes.bfloat16)}
