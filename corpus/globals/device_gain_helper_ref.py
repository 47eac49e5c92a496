"""Reference for gain_stream: out[k] = in[k] * gain_table[k % 16]; each tap's counter grows by
the number of k with that tap."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float32)
    taps = np.arange(x.shape[0]) & 15
    out = x * inputs["gain_table"].astype(np.float32)[taps]
    hits = inputs["tap_hits"].astype(np.int64) + np.bincount(taps, minlength=16)
    return {"out": out, "tap_hits": (hits % (1 << 32)).astype(np.uint32)}
