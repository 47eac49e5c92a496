"""Reference for tone_quantize (float32 steps as the kernel takes them)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    f = np.float32
    v = inputs["img"].astype(f)
    t = np.tan((f(0.7) * v).astype(np.float64)).astype(f)
    tone = np.clip(f(0.5) + f(0.5) * t, f(0), f(1)).astype(f)
    return {
        "code": np.rint(tone * f(255.0)).astype(np.int32),
        "level": (f(0.25) * np.rint(f(4.0) * v)).astype(f),
        "cell": np.floor(v * f(1.5)).astype(np.int32),
    }
