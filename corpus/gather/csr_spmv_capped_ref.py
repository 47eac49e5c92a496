"""Reference for spmv_csr_capped (float64 row sums in entry order, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    begin = inputs["row_begin"].astype(np.int64)
    cols = inputs["col_of"].astype(np.int64)
    nz = inputs["nz"].astype(np.float64)
    x = inputs["xv"].astype(np.float64)
    cap = int(scalars["cap_per_row"])
    rows = begin.shape[0] - 1
    y = np.zeros(rows, dtype=np.float64)
    for r in range(rows):
        for e in range(begin[r], min(begin[r + 1], begin[r] + cap)):
            y[r] += nz[e] * x[cols[e]]
    return {"yv": y.astype(np.float32)}
