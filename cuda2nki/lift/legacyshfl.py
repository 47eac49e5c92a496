"""Pre-CUDA 9 warp shuffles (``__shfl_down(v, d)``, ``__shfl_xor(v, m, w)``, ...): the same
exchange as the ``_sync`` forms over the whole warp, which is what they did (every lane of the
warp took part; the ``_sync`` forms name the lanes in a mask)."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import UINT

#: legacy shuffle -> its ``_sync`` form (arguments: value, lane or offset, optional width)
LEGACY_SHUFFLES = {
    "__shfl": "__shfl_sync",
    "__shfl_up": "__shfl_up_sync",
    "__shfl_down": "__shfl_down_sync",
    "__shfl_xor": "__shfl_xor_sync",
}

FULL_MASK = 0xFFFFFFFF


def legacy_shuffle(e: A.Call) -> A.Call:
    """``e`` (a legacy shuffle) as its ``_sync`` form with the full warp's mask."""
    mask = A.IntLit(value=FULL_MASK, loc=e.loc, ty=UINT)
    return A.Call(func=LEGACY_SHUFFLES[e.func], args=(mask, *e.args), loc=e.loc, ty=e.ty)
