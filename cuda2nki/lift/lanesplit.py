"""Vector and record values split into their lanes before a second lift attempt.

The symbolic executor reasons about scalars (and simple vector locals).  A kernel computing with
``float2/3/4`` values, user structs or typedef'd records -- member stores through reference
out-parameters of device functions, arrays of structs in global or shared memory, whole-struct
copies -- is refused by it.  The same kernel in scalar form (:mod:`cuda2nki.lift.literal.scalarise`:
lanes as separate values, ``p[i].y`` as element ``W*i + 1`` of the scalar tensor, reference
outputs as assignments) is what the recognisers claim; a record tensor is bound ``[n, W]``, so
the lanes of a tile of records are one strided view of one tensor.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift.indexshape import shape_of_accesses
from cuda2nki.lift.literal.lower import LiteralRefusal
from cuda2nki.lift.literal.scalarise import scalarise
from cuda2nki.lift.literal.vecscan import uses_vectors


def lane_split(
    tu: A.TranslationUnit, fn: A.Function
) -> tuple[A.TranslationUnit, A.Function] | None:
    """``(tu, fn)`` with ``fn``'s vector and record values scalarised, or None where ``fn`` uses
    none or they do not scalarise (the first lift's refusal then stands)."""
    if not uses_vectors(tu, fn):
        return None
    try:
        got_tu, got_fn = scalarise(tu, fn)
    except LiteralRefusal:
        return None
    return None if got_fn == fn else (got_tu, got_fn)


def record_shapes(fn: A.Function, accesses: dict, block: tuple | None, ties: dict) -> dict:
    """Shapes of the pointers to records (or vectors) of ``W`` lanes, from the accesses of the
    split kernel (offsets ``W * r + f`` of the scalars, ``0 <= f < W``): the shape of the record
    index ``r``, then ``W`` -- the binding counts records as ``[n, W]``, as their index
    expressions give it (:func:`cuda2nki.lift.extents.in_scalars`)."""
    out = {}
    for p in fn.params:
        pointee = p.ty.pointee if isinstance(p.ty, A.PointerType) else None
        if type(pointee) is not A.VectorType or pointee.width < 2 or not accesses.get(p.name):
            continue
        rows = _record_accesses(accesses[p.name], pointee.width)
        shape = None if rows is None else shape_of_accesses(rows, block, ties)
        if shape is not None:
            out[p.name] = [*shape, pointee.width]
    return out


def _record_accesses(acc: list, width: int) -> list | None:
    """``acc`` (kind, offset, guard, loops) with each offset ``W * r + f`` as its record ``r``;
    None when an offset is not of that form."""
    out = []
    for kind, index, guard, loops in acc:
        if index is None:
            return None
        field = index.as_dict().get((), 0) % width
        rows = af._exact_div(index - field, af.Poly.const(width))
        if rows is None:
            return None
        out.append((kind, rows, guard, loops))
    return out
