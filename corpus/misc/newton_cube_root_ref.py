"""Reference for newton_cube_root: the same Newton steps in float32, each element stopping when
its last update is within the relative tolerance; the steps each took."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    s = inputs["a"].astype(np.float32)
    tol = np.float32(scalars["tol"])
    z = np.maximum(s, np.float32(1.0))
    n = np.zeros(s.shape, dtype=np.int32)
    going = np.ones(s.shape, dtype=bool)
    while going.any():
        zg = z[going]
        delta = (zg * zg * zg - s[going]) / (np.float32(3.0) * zg * zg)
        zg = zg - delta
        z[going] = zg
        n[going] += 1
        still = np.abs(delta) > tol * zg
        going[np.flatnonzero(going)[~still]] = False
    return {"root": z, "steps": n}
