"""Store-to-load forwarding across a size stride.

A thread that stores ``C[r * N + c]`` and then reads ``C[(r + 1) * N + c]`` reads another
element unless ``N == 0``.  A size parameter that scales an index of the store is a stride of
the tensor: when it is 0 the tensor holds no element at all and neither access happens, so the
two addresses never meet.  Without this, each row of a register tile read after the previous
row's store (``C[...] = alpha * acc[r] + beta * C[...]`` unrolled over ``r``) carries a
``N == 0`` select that keeps the rows from rolling back into one loop.
"""

from __future__ import annotations

from cuda2nki.lift.affine import Poly


def stride_gap(store_index: Poly, load_index: Poly, sizes: set[str]) -> bool:
    """The two addresses differ by ``c * S`` (``c != 0``, ``S`` a product of integer size
    parameters each of which scales an index term of the store: a stride)."""
    diff = store_index - load_index
    if len(diff.terms) != 1:
        return False
    ((mono, c),) = diff.terms
    if c == 0 or not mono or any(a not in sizes for a in mono):
        return False
    strides = {
        a
        for m, _ in store_index.terms
        if any(b not in sizes for b in m)  # a term with an index atom
        for a in m
        if a in sizes
    }
    return all(a in strides for a in mono)


__all__ = ["stride_gap"]
