"""Reference for compact_above: blocks reserve their runs one after another (block 0's passes
first), survivors keep their thread order inside a run: one legal CUDA execution, the one the
SIMT interpreter runs for kernels that use an atomicAdd's old value."""

import numpy as np

GRID, BLOCK = 6, 128


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"]
    floor_value = np.float32(scalars["floor_value"])
    n = x.shape[0]
    kept = []
    for block in range(GRID):
        for base in range(block * BLOCK, n, GRID * BLOCK):
            part = x[base : base + BLOCK]
            kept.extend(part[part > floor_value])
    out = np.zeros(n, np.float32)
    out[: len(kept)] = kept
    count = inputs["kept_count"].astype(np.int64) + len(kept)
    return {"kept": out, "kept_count": count.astype(np.int32)}
