"""Reference for embed_flat3d."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    T = int(scalars["T"])
    out = inputs["wte"][inputs["tok"]] + inputs["wpe"][None, :T, :]
    return {"out": out.reshape(-1).astype(np.float32)}
