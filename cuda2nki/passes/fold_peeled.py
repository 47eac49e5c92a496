"""``fold-peeled``: a reduction whose first element CUDA peeled off becomes one reduction.

CUDA often starts a running maximum (or sum) from the first element and loops over the rest::

    float m = x[0]; for (int j = 1; j < C; j++) m = fmaxf(m, x[j]);

which lifts to ``max(x[i, 0], reduce(max, k < C - 1: x[i, 1 + k]))``.  On Trainium that is two
loads and an engine reduction over a row that is one element short (empty when ``C == 1``); the
same value is ``reduce(max, k < C: x[i, k])``.

Before::  max(x[i, 0], reduce(max, k < -1 + C: x[i, 1 + k]))
After::   reduce(max, k < C: x[i, k])

Applies to ``max``, ``min`` and ``add`` (a reassociated sum: within the fidelity bound, which
does not assume an order), with the peeled element on either side, on any one index dimension.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import Add, Axis, Binary, Const, Kernel, Read, Reduce, Sub, Sym
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import transform
from cuda2nki.passes._index import linear
from cuda2nki.passes.base import Pass, PassContext, map_computes

_FOLDABLE = (Op.MAX, Op.MIN, Op.ADD)


@dataclass(frozen=True)
class FoldPeeledPass(Pass):
    name: ClassVar[str] = "fold-peeled"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        return map_computes(kernel, fold)


def fold(e: Any) -> Any:
    """``e`` with every peeled reduction folded (bottom-up)."""
    return transform(e, lambda x: (_merge(x) or x) if isinstance(x, Binary) else x)


def _merge(e: Binary) -> Reduce | None:
    if e.op not in _FOLDABLE:
        return None
    for single, red in ((e.a, e.b), (e.b, e.a)):
        if not (isinstance(red, Reduce) and red.op == e.op and red.where is None):
            continue
        if len(red.axes) != 1 or not isinstance(single, Read) or not isinstance(red.body, Read):
            continue
        got = _peeled_dim(single, red.body, red.axes[0].name)
        if got is None:
            continue
        d, start = got
        k = red.axes[0]
        index = list(red.body.index)
        index[d] = Sym(k.name) if start == 0 else Add(Const(start), Sym(k.name))
        body = red.body.replace(index=tuple(index))
        axis = Axis(k.name, _plus_one(k.extent), k.kind, loc=k.loc)
        return red.replace(axes=(axis,), body=body)
    return None


def _peeled_dim(single: Read, body: Read, k: str) -> tuple[int, int] | None:
    """The one dim where ``single`` reads element ``c`` and ``body`` reads ``c + 1 + k``."""
    if single.tensor != body.tensor or len(single.index) != len(body.index):
        return None
    dims = [d for d, (a, b) in enumerate(zip(single.index, body.index)) if a != b]
    if len(dims) != 1:
        return None
    d = dims[0]
    first, rest = single.index[d], linear(body.index[d], frozenset({k}))
    if not isinstance(first, Const) or rest is None or set(rest) != {k, None}:
        return None
    if rest[k] != Const(1) or rest[None] != Const(first.value + 1):
        return None
    if any(k in x.free_syms() for x in single.index):
        return None
    return d, first.value


def _plus_one(extent: Any) -> Any:
    """``extent + 1`` without a visible ``- 1 + 1``."""
    if isinstance(extent, Add):
        for a, b in ((extent.a, extent.b), (extent.b, extent.a)):
            if a == Const(-1):
                return b
    if isinstance(extent, Sub) and extent.b == Const(1):
        return extent.a
    if isinstance(extent, Const):
        return Const(extent.value + 1)
    return Add(extent, Const(1))
