"""Where the batch loops of a row-tile nest go: outermost, or inside the tile loops.

A row-tile nest over ``out[b, t, c]`` with the partition axis ``t`` loops over the batch axis
``b`` around the tiles.  When an operand a tile reads does not depend on the batch
(``wpe[t, c]`` in ``out[b, t, c] = wte[ids[b, t], c] + wpe[t, c]``), that order loads it once per
batch element; with the batch loop inside the tile loops it is the same tile for every batch
element, and ``hoist-loads`` lifts it out of the batch loop: one load per tile.
"""

from __future__ import annotations

from collections.abc import Iterable

from cuda2nki.ir.nodes import Compute, Dyn
from cuda2nki.passes._analysis import reads


def shared_across_batch(group: Iterable[Compute], outer: set[str]) -> bool:
    """Some operand of a row tile is the same for every element of a batch axis in ``outer``:
    it reads the tile's own axes but not every batch axis."""
    if not outer:
        return False
    for c in group:
        tile_axes = {a.name for a in c.domain.axes} - outer
        for rd in reads(c.expr):
            if any(isinstance(ix, Dyn) for ix in rd.index):
                continue  # a gathered row follows its key, which may follow the batch
            syms: set[str] = set()
            for ix in rd.index:
                syms |= ix.free_syms()
            if syms & tile_axes and not outer <= syms:
                return True
    return False
