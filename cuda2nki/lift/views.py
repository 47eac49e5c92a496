"""Reads of an N-D tensor through a view that merges contiguous dims.

Host code often binds a tensor N-D (``dout`` as ``[B, T, OC]``) while the kernel walks it flat
over merged dims: ``dout[i * OC + o]`` with ``i < B * T``, ``targets[idx]`` with
``idx < B * T``.  Row-major storage makes the tensor the same memory as ``[B * T, OC]`` or
``[B * T]``: the offset splits along the merged shape, and each merged index is taken back apart
into the bound dims by ``/`` and ``%`` (``i`` is row ``i / T``, ``i % T``), which later passes turn
into separate axes (``split-flat``) or keep as an access pattern over the merged dims.

Before::  targets[ax0]            with targets bound [B, T], ax0 < B * T
After::   targets[ax0 / T, ax0 % T]

The views are tried with as few merges as possible first, so an offset that splits along the
bound shape is never touched, and the caller's range check decides each candidate.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly

Groups = tuple[tuple[int, ...], ...]


def merges(rank: int) -> Iterator[Groups]:
    """Every grouping of ``rank`` dims into contiguous runs other than all singletons, with the
    most groups (the fewest merged dims) first."""
    cuts = list(range(1, rank))
    for keep in range(rank - 2, -1, -1):
        for chosen in itertools.combinations(cuts, keep):
            bounds = [0, *chosen, rank]
            yield tuple(tuple(range(a, b)) for a, b in itertools.pairwise(bounds))


def merged_shape(shape: tuple, groups: Groups) -> tuple:
    """The extents of the view: the product of each group's dims."""
    out = []
    for g in groups:
        ext = af.ONE
        for k in g:
            ext = ext * shape[k]
        out.append(ext)
    return tuple(out)


def expand(dims: list, shape: tuple, groups: Groups) -> list:
    """Indices of the view back along the bound dims: a merged index ``d`` over dims
    ``(s1, ..., sk)`` is ``d / (s2*...*sk)``, then ``(d / (s3*...*sk)) % s2``, ..., ``d % sk``."""
    out: list = []
    for d, g in zip(dims, groups):
        for j, k in enumerate(g):
            inner = af.ONE
            for m in g[j + 1 :]:
                inner = inner * shape[m]
            q = af.floordiv(d, inner)
            out.append(q if j == 0 else af.mod(q, shape[k]))
    return out


def split_by_view(
    flat: Poly,
    shape: tuple,
    split: Callable[[Poly, tuple], list | None],
) -> list | None:
    """The bound-shape indices of ``flat`` read through the first merged view along which it
    splits (``split`` delinearizes and range-checks against a shape), or None."""
    if len(shape) < 2:
        return None
    for groups in merges(len(shape)):
        view = merged_shape(shape, groups)
        dims = split(flat, view)
        if dims is not None:
            return expand(dims, shape, groups)
    return None
