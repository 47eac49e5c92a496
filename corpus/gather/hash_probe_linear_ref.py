"""Reference for lookup_linear_probe (exact: uint32 arithmetic as Python integers)."""

import numpy as np

MASK = 0xFFFFFFFF
EMPTY = 0xFFFFFFFF
PROBES = 16


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    keys = [int(k) for k in inputs["slot_key"]]
    vals = inputs["slot_val"]
    mask = int(scalars["capacity"]) - 1
    out = np.full(inputs["queries"].shape[0], -1.0, dtype=np.float32)
    for i, q in enumerate(int(v) for v in inputs["queries"]):
        slot = ((q * 2654435761) & MASK) & mask
        for _ in range(PROBES):
            if keys[slot] == q:
                out[i] = vals[slot]
                break
            if keys[slot] == EMPTY:
                break
            slot = (slot + 1) & mask
    return {"found": out}
