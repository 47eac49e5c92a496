"""Reference for kmeans_assign. Distances are accumulated in float32 in the kernel's order
(feature by feature), so near-ties resolve exactly as in CUDA; first minimum wins."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    pts = inputs["points"].astype(np.float32)
    cen = inputs["centroids"].astype(np.float32)
    dist = np.zeros((pts.shape[0], cen.shape[0]), dtype=np.float32)
    for f in range(pts.shape[1]):
        diff = pts[:, None, f] - cen[None, :, f]
        dist = dist + diff * diff
    return {"membership": dist.argmin(axis=1).astype(np.int32)}
