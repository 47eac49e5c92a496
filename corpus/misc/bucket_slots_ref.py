"""Reference for bucket_slots: keys take the slots of their bucket in thread order (blocks one
after another, threads by id), the order the SIMT interpreter serialises atomicAdd in."""

import numpy as np

CAPACITY = 16


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    keys = inputs["keys"]
    sizes = inputs["bucket_size"].astype(np.int64).copy()
    buckets = sizes.shape[0]
    items = np.zeros(buckets * CAPACITY, np.int32)
    for gid, key in enumerate(keys):
        if key < 0:
            continue
        b = int(key) % buckets
        slot = sizes[b]
        sizes[b] += 1
        if slot < CAPACITY:
            items[b * CAPACITY + slot] = gid
    return {"bucket_size": sizes.astype(np.int32), "bucket_items": items}
