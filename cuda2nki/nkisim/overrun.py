"""Legacy slices of an HBM tensor that run past its end, for a masked access.

The legacy API masks an access with ``mask=`` instead of sizing its view: a kernel that tiles
``N`` rows by 128 reads ``t[i * 128 : i * 128 + 128]`` for the last tile too, with a mask that
keeps the rows below ``N`` (the public samples' adaptive average pooling does so).  Such a slice
is a view whose elements past the end are marked outside the tensor (an index view, as an
``nl.arange`` subscript makes): an instruction that reads or writes them unmasked is refused
there (C2N3019, at the access), one whose mask leaves them out runs.
"""

from __future__ import annotations

import numpy as np


def overrun_key(key: tuple, shape: tuple[int, ...]) -> tuple | None:
    """Index arrays for a subscript of ``shape`` made only of slices with integer bounds and
    positive steps, of which one at least ends past its dimension (and none starts past it);
    ``None`` for any other subscript (the slice checks apply)."""
    if len(key) != len(shape) or not all(type(k) is slice for k in key):
        return None
    spans = []
    over = False
    for k, n in zip(key, shape):
        start = 0 if k.start is None else k.start
        stop = n if k.stop is None else k.stop
        step = 1 if k.step is None else k.step
        if not all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
            return None
        start, stop, step = int(start), int(stop), int(step)
        if step <= 0 or not 0 <= start <= n or stop < 0:
            return None
        over = over or stop > n
        spans.append((start, stop, step))
    if not over:
        return None
    nd = len(shape)
    return tuple(
        np.arange(a, b, s, dtype=np.int64).reshape([-1 if i == d else 1 for i in range(nd)])
        for d, (a, b, s) in enumerate(spans)
    )
