"""Statements that write every element of a tensor together: the fields of records.

A kernel over records writes each field by its own statement (``s[i].x = ...; s[i].y = ...``
lifts to ``s[i, 0] = A for i < n`` and ``s[j, 1] = B for j < n``; a flattened array of pairs
to ``q[2 * i] = A`` and ``q[2 * j + 1] = B``).  No one statement covers the tensor, so an
``inout`` target would keep its old values by a copy of the whole tensor before the writes --
a copy every element of which the writes then replace.  :func:`jointly_covered` names the
tensors whose writes cover them together, so that no such copy is needed.

Covered together: every statement writing the tensor is unguarded, does not accumulate, has a
one-axis domain and indexes each dim affinely (``k * i + c`` with constant ``k`` and ``c``, or
a constant); the statements share the strides of their moving dims, each moving dim's stride
times its extent is the dim's size, and the statements' offsets cover every combination of the
offsets ``0 .. k - 1`` of the moving dims and ``0 .. size - 1`` of the fixed ones exactly once.
"""

from __future__ import annotations

import itertools

from cuda2nki.ir.nodes import Compute, Const, Kernel, Select, SizeExpr
from cuda2nki.passes._index import affine1


def jointly_covered(kernel: Kernel) -> frozenset[str]:
    """The tensors whose statements (all of them plain, unguarded writes) cover every element
    together, though none of them does alone."""
    writes: dict[str, list[Compute]] = {}
    for s in kernel.body:
        if isinstance(s, Compute):
            writes.setdefault(s.target.tensor, []).append(s)
    out = set()
    for name, stmts in writes.items():
        decl = kernel.tensors.get(name)
        if decl is not None and len(stmts) > 1 and _covers(stmts, decl.shape):
            out.add(name)
    return frozenset(out)


def _covers(stmts: list[Compute], shape: tuple[SizeExpr, ...]) -> bool:
    pattern = None
    offsets = set()
    for c in stmts:
        got = _fields(c, shape)
        if got is None:
            return False
        strides, offs = got
        if pattern is None:
            pattern = strides
        elif strides != pattern:
            return False
        if offs in offsets:
            return False
        offsets.add(offs)
    assert pattern is not None
    ranges = [range(k) for k in pattern]
    return offsets == set(itertools.product(*ranges))


def _fields(c: Compute, shape: tuple[SizeExpr, ...]) -> tuple[tuple[int, ...], tuple] | None:
    """Per dim of the target, the span of offsets the dim needs covered (the stride of a moving
    dim, the size of a fixed one) and this statement's offset in it; None where the statement
    is not a plain field write over the whole extent."""
    if (
        c.domain.guard is not None
        or c.accumulate is not None
        or isinstance(c.expr, Select)
        or len(c.domain.axes) != 1
        or len(c.target.index) != len(shape)
    ):
        return None
    ax = c.domain.axes[0]
    strides, offs = [], []
    moved = False
    for ix, dim in zip(c.target.index, shape):
        a = affine1(ix, frozenset({ax.name}))
        if a is None or not isinstance(a.c, Const):
            return None
        if a.axis is None:
            if not isinstance(dim, Const) or not 0 <= a.c.value < dim.value:
                return None
            strides.append(dim.value)
        else:
            if moved or a.k < 1 or not 0 <= a.c.value < a.k or not _product(a.k, ax.extent, dim):
                return None
            moved = True
            strides.append(a.k)
        offs.append(a.c.value)
    return (tuple(strides), tuple(offs)) if moved else None


def _product(k: int, extent: SizeExpr, dim: SizeExpr) -> bool:
    """``k * extent`` is ``dim``, as written (``2 * n`` for ``n``, or both numbers)."""
    from cuda2nki.passes._index import _fold

    if k == 1:
        return extent == dim
    return _fold(Const(k) * extent) == dim or (
        isinstance(extent, Const) and isinstance(dim, Const) and k * extent.value == dim.value
    )
