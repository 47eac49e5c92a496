"""Reference for csr_row_spmv: y[r] = sum of vals[k] * xv[cols[k]] over offsets[r] <= k < offsets[r + 1]
(an empty row when the second offset is not above the first)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    off = inputs["offsets"].astype(np.int64)
    cols = inputs["cols"].astype(np.int64)
    vals = inputs["vals"].astype(np.float64)
    x = inputs["xv"].astype(np.float64)
    rows = int(scalars["rows"])
    y = np.zeros(rows)
    for r in range(rows):
        k = np.arange(off[r], max(off[r], off[r + 1]))
        y[r] = np.sum(vals[k] * x[cols[k]])
    return {"yv": y.astype(np.float32)}
