"""Reference for tile_bitonic_sort: each 128-key tile sorted ascending."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    keys = inputs["keys"].reshape(-1, 128)
    return {"sorted": np.sort(keys, axis=1).reshape(-1).astype(np.uint32)}
