"""Reference for pick_label_scaled (float32: one rounding for the product, one for the add)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["logits"].astype(np.float32)
    t = inputs["labels"].astype(np.int64)
    s = np.float32(scalars["scale"])
    return {"picked": s * x[np.arange(x.shape[0]), t] + np.float32(1.0)}
