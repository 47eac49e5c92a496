"""Reference for reverse_block_async: each 256-element block reversed; out[i] is written where
its mirror j = block start + 255 - t exists (else it keeps its zero)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float32)
    n = x.shape[0]
    i = np.arange(n)
    j = (i // 256) * 256 + 255 - i % 256
    out = np.zeros(n, np.float32)
    ok = j < n
    out[ok] = x[j[ok]]
    return {"out": out}
