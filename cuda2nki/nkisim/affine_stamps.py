"""Legacy ``affine_range`` write stamps kept as boxes (``Storage.aff``, ``NkiTensor._check_affine``).

The independence check stamps each element of an HBM output with its last writer (loop serial,
iteration) and rejects a write over an element stamped by another iteration of the same loop
run.  Tiled kernels write each output tile once: a box of the index space that overlaps no
earlier stamped write.  Such a write cannot clash (its elements were never stamped), so while
every stamped write is such a box the stamps are the boxes and their marks, not an int64 per
element of the output (whose allocation and passes cost more than the store itself).  The
first write that is not a box, is masked, or overlaps an earlier box turns the record into the
per-element stamps (:meth:`StampBoxes.materialize`) and takes the per-element check.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class StampBoxes:
    """Disjoint boxes of a storage's index space, each with the stamp of the write that made it."""

    __slots__ = ("boxes", "marks", "lo", "hi")

    MAX_BOXES = 1 << 13  # beyond this, the per-element stamps cost less than the overlap tests

    def __init__(self, boxes: Any):
        """``boxes``: an empty ``tensor.WrittenBoxes`` of the storage (it finds each view's box)."""
        self.boxes = boxes
        self.marks: list[int] = []
        nd = len(boxes.dims)
        self.lo = np.empty((16, nd), dtype=np.int64)
        self.hi = np.empty((16, nd), dtype=np.int64)

    def add(self, a: np.ndarray, boff: int, mark: int) -> bool:
        """Stamp the strided view ``a`` (``boff`` bytes into the storage) with ``mark``; False
        (nothing recorded) when it is not a box or overlaps a stamped box."""
        bl = self.boxes.boxes
        n = len(bl)
        if n >= self.MAX_BOXES or not self.boxes.add(a, boff):
            return False
        if len(bl) == n:
            return True  # an empty view: nothing stamped
        start, stop = bl[-1]
        if n and ((self.lo[:n] < stop) & (self.hi[:n] > start)).all(axis=1).any():
            bl.pop()
            return False
        if n == len(self.lo):
            self.lo = np.concatenate((self.lo, np.empty_like(self.lo)))
            self.hi = np.concatenate((self.hi, np.empty_like(self.hi)))
        self.lo[n] = start
        self.hi[n] = stop
        self.marks.append(mark)
        return True

    def materialize(self, size: int) -> np.ndarray:
        """The per-element stamps (0: never written in an affine loop)."""
        stamps = np.zeros(size, dtype=np.int64)
        grid = stamps.reshape(self.boxes.dims)
        for (start, stop), mark in zip(self.boxes.boxes, self.marks):
            grid[tuple(map(slice, start, stop))] = mark
        return stamps
