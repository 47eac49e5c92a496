"""Reference for int8_gemv: byte and half-word dot products in int64, wrapped to 32 bits."""

import numpy as np


def _wrap(v: np.ndarray) -> np.ndarray:
    return (v & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    rows, words = int(scalars["rows"]), int(scalars["words"])
    q = inputs["packed_rows"].astype(np.int32).reshape(rows, words)
    qb = q.view(np.int8).reshape(rows, words, 4).astype(np.int64)
    vb = inputs["packed_vec"].astype(np.int32).view(np.int8).reshape(words, 4).astype(np.int64)
    acc = _wrap((qb * vb).sum(axis=(1, 2)))
    h = inputs["act16"].astype(np.int32).view(np.int16).reshape(words, 2).astype(np.int64)
    wide = (qb[:, :, 0] * h[:, 0] + qb[:, :, 1] * h[:, 1]).sum(1)
    wide = wide + (qb[:, :, 2] * h[:, 0] + qb[:, :, 3] * h[:, 1]).sum(1)
    result = np.float32(scalars["scale"]) * acc.astype(np.float32)
    return {"result": result.astype(np.float32), "mixed": _wrap(wide)}
