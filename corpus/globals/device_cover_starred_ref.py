"""Reference for cover_starred: starred columns covered and counted, the others' cost raised by
the penalty."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    star = inputs["star_row"]
    starred = star >= 0
    covered = np.where(starred, 1, inputs["covered"]).astype(np.int32)
    cost = inputs["cost"].astype(np.float32)
    cost = np.where(starred, cost, cost + inputs["penalty"].astype(np.float32)[0])
    matched = inputs["matched"].astype(np.int64) + int(starred.sum())
    return {"cost": cost, "covered": covered, "matched": matched.astype(np.int32)}
