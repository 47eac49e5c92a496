"""A stage of a sorting network as a few strided views: comparators grouped into boxes.

A box is ``count_1 x ... x count_k`` comparators whose low and high positions are affine in the
box coordinates: ``lo = lo0 + sum(lo_stride_d * x_d)``, ``hi = hi0 + sum(hi_stride_d * x_d)``.
One box is one access pattern on the segment (two views: the low and the high ends), so a
stage costs a few vector instructions per box whatever the segment size.  Boxes are built
bottom-up: runs of comparators with a constant step, then runs of equal runs whose starts step
evenly, up to :data:`MAX_DIMS` levels.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.lift.sortnets import Comparator, Stage

#: dimensions of one box: NKI access patterns have up to 4 free dimensions, and the port keeps
#: one of them for the segments that share a partition
MAX_DIMS = 3
#: the most boxes one direction of one stage may need before the network is not tiled
MAX_BOXES = 8


@dataclass(frozen=True)
class Box:
    """``dims``: ``(lo_stride, hi_stride, count)`` per dimension, outermost first."""

    lo: int
    hi: int
    up: bool
    dims: tuple[tuple[int, int, int], ...]

    @property
    def size(self) -> int:
        out = 1
        for _, _, c in self.dims:
            out *= c
        return out


def _runs(items: list[tuple[int, int, tuple]]) -> list[tuple[int, int, tuple]]:
    """Group consecutive items (start lo, start hi, dims) with identical dims whose starts step
    evenly into items one dimension higher (a lone item stays as it is)."""
    out: list[tuple[int, int, tuple]] = []
    i = 0
    while i < len(items):
        lo, hi, dims = items[i]
        j = i + 1
        if j < len(items) and items[j][2] == dims:
            step = (items[j][0] - lo, items[j][1] - hi)
            while (
                j < len(items)
                and items[j][2] == dims
                and (items[j][0] - items[j - 1][0], items[j][1] - items[j - 1][1]) == step
            ):
                j += 1
            out.append((lo, hi, ((step[0], step[1], j - i), *dims)))
        else:
            out.append((lo, hi, dims))
        i = j
    return out


def _boxes(comps: list[Comparator], up: bool) -> list[Box]:
    items: list[tuple[int, int, tuple]] = [(lo, hi, ()) for lo, hi, _ in sorted(comps)]
    for _ in range(MAX_DIMS):
        grouped = _runs(items)
        if len(grouped) == len(items):
            break
        items = grouped
    boxes = [Box(lo, hi, up, dims or ((1, 1, 1),)) for lo, hi, dims in items]
    return [b if len(b.dims) <= MAX_DIMS else _too_deep() for b in boxes]


def _too_deep() -> Box:
    raise ValueError(f"a box of more than {MAX_DIMS} dimensions")


def stage_boxes(stage: Stage) -> tuple[Box, ...] | None:
    """The boxes of one stage (ascending comparators first), or None where a direction needs
    more than :data:`MAX_BOXES` of them."""
    out: list[Box] = []
    for up in (True, False):
        comps = [c for c in stage if c[2] == up]
        if not comps:
            continue
        try:
            got = _boxes(comps, up)
        except ValueError:
            return None
        if len(got) > MAX_BOXES:
            return None
        out.extend(got)
    return tuple(out)


def expand(box: Box) -> list[Comparator]:
    """The comparators of a box (for tests and checks)."""
    pts = [(box.lo, box.hi)]
    for ls, hs, c in box.dims:
        pts = [(lo + k * ls, hi + k * hs) for lo, hi in pts for k in range(c)]
    return [(lo, hi, box.up) for lo, hi in pts]
