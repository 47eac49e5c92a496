"""Reference for clip_field: the field clipped to [lo, hi]; the flag is 1 where a value changed,
else as it was."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    f = inputs["field"].astype(np.float32)
    w = np.minimum(np.maximum(f, np.float32(scalars["lo"])), np.float32(scalars["hi"]))
    changed = bool((w != f).any())
    flag = np.ones(1, np.int32) if changed else inputs["clipped"].astype(np.int32)
    return {"field": w, "clipped": flag}
