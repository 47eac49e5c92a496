"""Reference for cell_span_nested (count / (hi - lo) where active, else 0; float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    span = inputs["cells_span"].astype(np.float32).reshape(-1, 2)
    width = span[:, 1] - span[:, 0]
    count = inputs["cells_count"].astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = count / width
    return {"density": np.where(inputs["cells_active"].astype(bool), d, np.float32(0))}
