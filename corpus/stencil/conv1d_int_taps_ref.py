"""Reference for conv1d_int_taps: out[p] = sum_t signal[p - ntaps//2 + t] * taps[t] (in range)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    s = inputs["signal"].astype(np.int64)
    w = inputs["taps"].astype(np.int64)
    n, m = s.shape[0], w.shape[0]
    out = np.zeros(n, np.int64)
    for t in range(m):
        at = np.arange(n) - m // 2 + t
        ok = (at >= 0) & (at < n)
        out[ok] += s[at[ok]] * w[t]
    return {"out": out.astype(np.int32)}
