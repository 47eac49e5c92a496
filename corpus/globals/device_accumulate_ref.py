"""Reference for accumulate_scaled: running_sum += weight * src (float32); the counter grows by
the number of positive inputs."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    src = inputs["src"].astype(np.float32)
    acc = inputs["running_sum"].astype(np.float32)
    w = np.float32(scalars["weight"])
    count = inputs["positive_count"].astype(np.int64) + int((src > 0).sum())
    return {"running_sum": acc + w * src, "positive_count": count.astype(np.int32)}
