"""Reference for doitgen_slice (float64, rounded to float32): only slice r changes."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    r = int(scalars["r"])
    out = inputs["sum"].copy()
    a = inputs["A"].astype(np.float64)
    out[r] = (a[r] @ inputs["C4"].astype(np.float64)).astype(np.float32)
    return {"sum": out}
