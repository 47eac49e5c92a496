"""Reference for histogram_global: bins += counts of the in-range keys (exact int32 arithmetic)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    data = inputs["data"].astype(np.int64)
    bins = inputs["bins"].astype(np.int64)
    nbins = bins.shape[0]
    keep = data[(data >= 0) & (data < nbins)]
    counts = np.bincount(keep, minlength=nbins)
    return {"bins": (bins + counts).astype(np.int32)}
