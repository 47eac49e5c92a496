"""Reference for encoder_forward (float32; one rounding per add)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    ids = inputs["inp"].astype(np.int64)
    wte = inputs["wte"].astype(np.float32)
    wpe = inputs["wpe"].astype(np.float32)
    ids = np.clip(ids, 0, wte.shape[0] - 1)
    return {"out": wte[ids] + wpe[None, :, :]}
