"""Reference for quantize_bytes (fp32 arithmetic in the kernel's order; C conversions)."""

import numpy as np

STEP = np.float32(0.0625)


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    v = inputs["values"].astype(np.float32)
    q = v / STEP
    whole = np.trunc(q)
    scaled = (whole + np.sign(q) * (np.abs(q - whole) >= 0.5)).astype(np.float32)
    level = scaled.astype(np.int64) + 128
    residual = ((v - scaled * STEP) * np.float32(1000.0)).astype(np.float32)
    return {
        "codes": (level % 256).astype(np.uint8),
        "residual_milli": np.trunc(residual).astype(np.int16),
    }
