"""Deferred stores: elementwise results written into an HBM tensor, computed in one pass later.

A tiled elementwise kernel loads a tile of each input, combines the tiles on an engine and
stores the result tile, once per tile.  The simulator already defers a load from a caller's
array (the tile keeps the source view, ``Storage.lazy``) and can defer a ``tensor_tensor`` of two
such tiles the same way (``fn(src1, src2)``).  When that tile is then stored whole into a fresh
HBM tensor, the store need not compute anything yet: the value of every element it writes is a
function of the element's position alone (the sources are caller arrays, which never change
during a run: writes to them go to a copy).  :class:`DeferredWrites` collects such stores and
evaluates them as few large rectangles as the written boxes allow, which reads the sources in
row order instead of tile by tile (a row-major array read as 128 x 512 tiles takes about twice
as long as one streaming pass).

What makes the deferral safe:

* all collected stores share one key: the same function, the same source arrays, the same
  strides and the same translation from destination to source coordinates.  Two stores that
  overlap then write the same values, so their order does not matter; a store with another key
  evaluates the collected ones first;
* the storage's ``pending`` record (lazy poison) is set while stores are collected, and every
  read of the storage settles it first (``Storage.settle`` evaluates the stores); every other
  write evaluates them before it writes (``NkiTensor.out_view``, ``NkiTensor.assign``);
* results are bit-identical to the tile-by-tile evaluation: the same NumPy function on the same
  fp32 values, element by element.

The trace is unaffected: every instruction is recorded when the kernel issues it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

Box = tuple[int, int, int, int]  # rows r0:r1, columns c0:c1 (elements) in the destination frame


class Frame(NamedTuple):
    """A 2-D view's place in its flat buffer: row stride in bytes, first element's row/column."""

    flat: np.ndarray
    row_bytes: int
    row: int
    col: int

    def view(self, r0: int, c0: int, rows: int, cols: int) -> np.ndarray:
        """The ``rows x cols`` view at frame position (r0, c0); NumPy checks the bounds."""
        flat = self.flat
        off = r0 * self.row_bytes + c0 * flat.itemsize
        return np.ndarray((rows, cols), flat.dtype, flat, off, (self.row_bytes, flat.itemsize))


def frame_of(a: np.ndarray, flat: np.ndarray, boff: int) -> Frame | None:
    """``a`` (a 2-D view ``boff`` bytes into ``flat``, same dtype) as a :class:`Frame`, or
    ``None`` when its rows are not positive, element-contiguous and unwrapped."""
    if a.ndim != 2 or a.dtype != flat.dtype or boff < 0:
        return None
    rb, cb = a.strides
    isz = a.itemsize
    if cb != isz or rb <= 0:
        return None
    r, rem = divmod(boff, rb)
    if rem % isz or rem + a.shape[1] * isz > rb:
        return None
    return Frame(flat, rb, r, rem // isz)


class Lazy(NamedTuple):
    """A tile's values still to be computed (``Storage.lazy``): ``fn(*srcs)`` into ``view``
    (``fn`` None: a copy of the one source).  The sources are views of caller arrays, which
    never change during a run (writes go to a copy); ``locs`` holds each one's ``(flat buffer,
    byte offset)``."""

    view: np.ndarray
    fn: object  # a NumPy ufunc or None
    srcs: tuple
    locs: tuple

    def compute(self) -> None:
        if self.fn is None:
            self.view[...] = self.srcs[0]
        else:
            self.fn(*self.srcs, out=self.view)  # type: ignore[operator]


class DeferredWrites:
    """Stores collected for one HBM storage, all computing ``fn(*srcs)`` (``fn`` None: a copy of
    the one source) with the same buffers, strides and source offsets (``key``)."""

    __slots__ = ("key", "fn", "dst", "srcs", "boxes")

    def __init__(self, key: tuple, fn: object, dst: Frame, srcs: tuple[Frame, ...]):
        self.key = key
        self.fn = fn
        self.dst = dst._replace(row=0, col=0)
        # the sources' offsets from the destination, in rows and columns
        self.srcs = tuple(s._replace(row=s.row - dst.row, col=s.col - dst.col) for s in srcs)
        self.boxes: list[Box] = []

    @staticmethod
    def key_of(fn: object, dst: Frame, srcs: tuple[Frame, ...]) -> tuple:
        """What two stores must share to be collected together (buffers by identity)."""
        key: list = [fn, id(dst.flat), dst.flat.dtype, dst.row_bytes]
        for s in srcs:
            key += (id(s.flat), s.flat.dtype, s.row_bytes, s.row - dst.row, s.col - dst.col)
        return tuple(key)

    def run(self) -> None:
        """Evaluate every collected store (as few rectangles as their boxes allow)."""
        dst, srcs = self.dst, self.srcs
        for r0, c0, r1, c1 in rectangles(self.boxes):
            rows, cols = r1 - r0, c1 - c0
            ins = tuple(s.view(r0 + s.row, c0 + s.col, rows, cols) for s in srcs)
            Lazy(dst.view(r0, c0, rows, cols), self.fn, ins, ()).compute()


def rectangles(boxes: list[Box]) -> list[Box]:
    """Rectangles covering exactly the union of ``boxes``: boxes of one row band whose column
    ranges touch or overlap become one run, and bands that meet with the same runs merge."""
    bands: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for r0, c0, r1, c1 in boxes:
        bands.setdefault((r0, r1), []).append((c0, c1))
    merged: list[tuple[int, int, list[tuple[int, int]]]] = []
    for (r0, r1), cols in sorted(bands.items()):
        runs = _runs(cols)
        if merged and merged[-1][1] == r0 and merged[-1][2] == runs:
            merged[-1] = (merged[-1][0], r1, runs)
        else:
            merged.append((r0, r1, runs))
    return [(r0, c0, r1, c1) for r0, r1, runs in merged for c0, c1 in runs]


def _runs(cols: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for c0, c1 in sorted(cols):
        if out and c0 <= out[-1][1]:
            if c1 > out[-1][1]:
                out[-1] = (out[-1][0], c1)
        else:
            out.append((c0, c1))
    return out
