"""Reference for embedding_backward: dwte[ids[t]] += dout[t] (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    dwte = inputs["dwte"].astype(np.float64)
    dout = inputs["dout"].astype(np.float64)
    ids = inputs["ids"].astype(np.int64)
    v = dwte.shape[0]
    keep = (ids >= 0) & (ids < v)
    np.add.at(dwte, ids[keep], dout[keep])
    return {"dwte": dwte.astype(np.float32)}
