"""Reference for scan_blelloch: exclusive cumsum and totals of 256-element chunks (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["g_idata"].astype(np.float64)
    n = x.shape[0]
    out = np.empty(n)
    totals = []
    for start in range(0, n, 256):
        chunk = x[start : start + 256]
        c = np.cumsum(chunk)
        out[start : start + 256] = c - chunk
        totals.append(c[-1])
    return {"g_odata": out.astype(np.float32), "block_totals": np.array(totals, dtype=np.float32)}
