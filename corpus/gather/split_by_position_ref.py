"""Reference for split_by_position: C's float-to-int conversion truncates toward zero."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    out = inputs["out"].copy()
    at = np.trunc(inputs["pos"] - np.float32(1.0)).astype(np.int64)
    flagged = inputs["flags"] != 0.0
    out[flagged] = inputs["src"][at[flagged]]
    return {"out": out}
