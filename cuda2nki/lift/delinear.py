"""Flat offsets split along a tensor's row-major shape (not a pass).

``delinearize`` gives each term of the offset to the outermost dim whose stride divides it;
``r * C + C - 1`` then splits as row ``r + 1``, column ``-1``.  ``borrows`` lists the other
splits of the same offset (a unit of an outer dim moved inward or outward) and
``inside_split`` picks one with no inner index provably outside its dim (row ``r``, column
``C - 1``).
"""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly


def delinearize(flat: Poly, shape: tuple) -> list | None:
    """Split a flat offset into per-dim indices (row-major strides from ``shape``): each term goes
    to the outermost dim whose stride divides it."""
    if len(shape) == 1:
        return [flat]
    strides = []
    for k in range(len(shape)):
        s = af.ONE
        for x in shape[k + 1 :]:
            s = s * x
        strides.append(s)
    dims = [af.ZERO] * len(shape)
    for m, c in flat.terms:
        term = Poly(((m, c),))
        for k, s in enumerate(strides):
            q = af._exact_div(term, s) if s != af.ONE else term
            if q is not None:
                dims[k] = dims[k] + q
                break
        else:
            return None
    return dims


def inside_split(dims: list, shape: tuple) -> list:
    """A store's split with no inner index provably outside its dim: ``r*C + C - 1`` splits
    as row ``r + 1``, column ``-1``, which is row ``r``, column ``C - 1`` (one unit borrowed
    from the outer dim); the split as it is when none is provably outside."""

    def outside(ds: list) -> bool:
        inner = list(zip(ds, shape))[1:]
        return any(af.provably_neg(d) or af.provably_nonneg(d - s) for d, s in inner)

    if not outside(dims):
        return dims
    return next((b for b in borrows(dims, shape) if not outside(b)), dims)


def borrows(dims: list, shape: tuple) -> list:
    """The other splits of the same flat offset: one unit of an outer dim moved inward or
    outward, and, where the inner dim's extent is a number, its constant offset divided by
    that extent (``(i - 1) * 96 + (j + 1)`` is ``96*i + j - 95``: row ``i - 1``, column
    ``j + 1``), the nearest splits first."""
    out = []
    for k in range(len(dims) - 1):
        s = shape[k + 1]
        units = [-1, 1]
        if s.is_const and s.const_value > 0:
            q = dims[k + 1].const_value // s.const_value
            units += [q, q + 1]
        for q in sorted(set(units) - {0}, key=lambda u: (abs(u), u)):
            b = list(dims)
            b[k] = b[k] + q
            b[k + 1] = b[k + 1] - q * s
            out.append(b)
    return out
