"""Fields of records on the flat ``[128, F]`` chunking (``coalesce-dma``): F records per
partition row instead of one, so each DMA moves ``F * W`` contiguous elements of a tile's
records rather than one record of ``W`` per partition row.

Two shapes of a 1-D map keep it off that layout, and both are settled here:

- a field read only where a select picks it (``active[i] ? count[i] / (span[i, 1] -
  span[i, 0]) : 0``): it is in bounds wherever the domain runs when it is a field of the
  point's own record, ``x[i, c]`` of an ``[N, W]`` tensor with ``i < N`` and ``0 <= c < W``
  (or ``x[W * i + c]`` of a flat ``[W * N]`` one);
- a reduction over a record's array member (``sum_q w[i, q]`` for ``q < W``, a small
  constant ``W``): it is the chain of its ``W`` fields, combined in the loop's order, as the
  CUDA loop does (``((w0 + w1) + w2) + w3``)::

      y[i] = reduce(add, q < 4: w[i, q]) * s[i]   ->   y[i] = (((w[i, 0] + w[i, 1]) + w[i, 2])
                                                              + w[i, 3]) * s[i]

  Only reductions without a mask, of an op with a binary form, whose body reads fields of
  records of exactly ``W`` fields (the member axis as the last index, alone, or a constant
  field: ``rows[r].v[e]`` reaches the lift as a select over ``e == 0, 1, ...``, decided once
  ``e`` is fixed).
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.ir.nodes import (
    Access,
    Axis,
    Binary,
    Cast,
    Compute,
    Const,
    Domain,
    Expr,
    Kernel,
    Read,
    Reduce,
    Sym,
)
from cuda2nki.ir.types import TypeEnv
from cuda2nki.passes._analysis import reads, reductions, transform, walk
from cuda2nki.passes._index import Affine1, access_class
from cuda2nki.passes._tiles import REDUCE_OPS
from cuda2nki.passes.fold_sizes import fold_size
from cuda2nki.passes.unit_reductions import unfold
from cuda2nki.rewrite import transform as transform_all

#: the widest record array member a reduction is unrolled over
MEMBER_MAX = 16


def own_record(acc: Read, c: Compute, kernel: Kernel) -> bool:
    """``acc`` reads a field of the domain point's own record, in bounds wherever the domain
    runs: ``x[i, c]`` of an ``[N, W]`` tensor (``i < N``, ``0 <= c < W`` constants), or
    ``x[W * i + c]`` of a ``[W * N]`` one."""
    decl = kernel.tensors.get(acc.tensor)
    axis = c.domain.axes[0] if len(c.domain.axes) == 1 else None
    got = access_class(acc.index, axis.name, "") if axis is not None else None
    if decl is None or got is None or len(decl.shape) != len(got[1]):
        return False
    extent = fold_size(axis.extent)
    for d, n in zip(got[1], decl.shape):
        if d.axis is None and not _within(d.c, fold_size(n)):
            return False
        if d.axis is not None and not _covers(d, fold_size(n), extent):
            return False
    return True


def _within(ix, n) -> bool:
    return isinstance(ix, Const) and isinstance(n, Const) and 0 <= ix.value < n.value


def _covers(d: Affine1, n, extent) -> bool:
    """``k * i + c`` for ``i < extent`` stays below ``n`` (``0 <= c < k``, ``n == k * extent``)."""
    if not isinstance(d.c, Const) or not 0 <= d.c.value < max(d.k, 1):
        return False
    return fold_size(Const(d.k) * extent) == n if d.k != 1 else n == extent


def flat_members(
    c: Compute, kernel: Kernel, eligible: Callable[[Compute, Kernel], bool]
) -> Compute:
    """``c`` with its reductions over record members unrolled when that puts it on the flat
    layout (``eligible``), else ``c`` as it is."""
    got = unroll_members(c, kernel)
    return got if got is not None and eligible(got, kernel) else c


def unroll_members(c: Compute, kernel: Kernel) -> Compute | None:
    """``c`` with every reduction over a record's array member unrolled into its fields; None
    when it has a reduction that is not one."""
    if len(c.domain.axes) != 1:
        return None
    found = [x for x in walk(c.expr) if isinstance(x, Reduce)]
    if not found or any(_unrolled(r, c.domain.axes[0].name, kernel) is None for r in found):
        return None
    return c.replace(expr=transform(c.expr, lambda x: _unroll_one(x, c, kernel)))


def _unroll_one(x, c: Compute, kernel: Kernel):
    if not isinstance(x, Reduce):
        return x
    got = _unrolled(x, c.domain.axes[0].name, kernel)
    return x if got is None else got


def _unrolled(r: Reduce, i: str, kernel: Kernel) -> Expr | None:
    if len(r.axes) != 1 or r.where is not None or r.op not in REDUCE_OPS:
        return None
    ext = fold_size(r.axes[0].extent)
    q = r.axes[0].name
    if not isinstance(ext, Const) or not 1 <= ext.value <= MEMBER_MAX:
        return None
    if any(isinstance(x, Reduce) for x in walk(r.body)):
        return None
    fields = [rd for rd in reads(r.body) if _field_index(rd, q)]
    if not fields or any(not _member(rd, q, i, ext.value, kernel) for rd in fields):
        return None
    env = TypeEnv(kernel)
    terms = [unfold(_at(r.body, q, k), env) for k in range(ext.value)]
    if r.acc_dtype is not None and _dtype(terms[0], env) != r.acc_dtype:
        terms = [Cast(r.acc_dtype, t, loc=r.loc) for t in terms]
    out = terms[0]
    for t in terms[1:]:
        out = Binary(r.op, out, t, loc=r.loc)
    return out


def _field_index(rd: Read, q: str) -> bool:
    """``rd`` reads a field of a record: its last index is the member axis or a constant (a
    member array indexed by the axis reaches the lift as a select over its constant fields)."""
    return len(rd.index) >= 2 and (
        rd.index[-1] == Sym(q) or isinstance(fold_size(rd.index[-1]), Const)
    )


def _member(rd: Read, q: str, i: str, width: int, kernel: Kernel) -> bool:
    """``x[..., i, q]`` (or ``x[..., i, 2]``) of records of exactly ``width`` fields: the
    member axis is the last index, alone, and the record's size is the constant ``width``."""
    decl = kernel.tensors.get(rd.tensor)
    if decl is None:
        return False
    if any(q in ix.free_syms() for ix in rd.index[:-1]):
        return False
    return fold_size(decl.shape[-1]) == Const(width) and i in _syms(rd)


def _syms(rd: Read) -> set[str]:
    out: set[str] = set()
    for ix in rd.index:
        out |= set(ix.free_syms())
    return out


def _at(body: Expr, q: str, k: int) -> Expr:
    """``body`` with the member axis fixed at ``k`` (its reads' indices folded)."""
    fixed = transform_all(body, lambda x: Const(k) if isinstance(x, Sym) and x.name == q else x)

    def fold(x):
        if isinstance(x, Read):
            return x.replace(index=tuple(fold_size(ix) for ix in x.index))
        return x

    return transform(fixed, fold)


def _dtype(e: Expr, env: TypeEnv) -> str | None:
    try:
        return env.dtype_of(e)
    except (TypeError, ValueError, KeyError):
        return None


def field_statements(
    c: Compute, later: tuple, kernel: Kernel, eligible: Callable[[Compute, Kernel], bool]
) -> list[Compute] | None:
    """A map over ``i < R, j < W`` writing whole records (``W`` a small constant, the target's
    last dim) as ``W`` maps over ``i``, one per field (each then on the flat layout; loop fusion
    and ``record-rows`` bring the fields back together in one DMA of the records); None when a
    field would not take the flat layout.  A copy of a tensor onto itself (the carry-over that
    keeps an ``inout`` tensor's unwritten elements) leaves out the fields later statements
    (``later``) write over the same rows anyway."""
    if len(c.domain.axes) != 2 or c.domain.guard is not None or c.accumulate is not None:
        return None
    (i, ext_i), (j, ext_j) = ((a.name, a.extent) for a in c.domain.axes)
    width = fold_size(ext_j)
    decl = kernel.tensors.get(c.target.tensor)
    if not isinstance(width, Const) or not 1 < width.value <= MEMBER_MAX or decl is None:
        return None
    if c.target.index[-1] != Sym(j) or fold_size(decl.shape[-1]) != width:
        return None
    if reductions(c.expr) or any(j in ix.free_syms() for ix in c.target.index[:-1]):
        return None
    if any(rd.tensor == c.target.tensor and rd.index != c.target.index for rd in reads(c.expr)):
        return None  # a field written from another field of the same records: kept whole
    fields = [k for k in range(width.value) if not _overwritten(c, k, later)]
    out = []
    for k in fields:
        one = transform_all(c, lambda x, k=k: Const(k) if isinstance(x, Sym) and x.name == j else x)
        one = one.replace(domain=Domain((Axis(i, ext_i),)))
        one = transform(one, _fold_reads)
        if not eligible(one, kernel):
            return None
        out.append(one)
    return out


def _fold_reads(x):
    if isinstance(x, Read | Access):
        return x.replace(index=tuple(fold_size(ix) for ix in x.index))
    return x


def _overwritten(c: Compute, k: int, later: tuple) -> bool:
    """``c`` copies its tensor onto itself and a later statement writes field ``k`` of every
    row ``c`` covers, unguarded and not accumulating (so the copy of that field is dead: the
    statements' reads of the tensor read its kernel-entry values)."""
    if not _self_copy(c) or c.target.index != tuple(Sym(n) for n in c.domain.names):
        return False
    rows = fold_size(c.domain.axes[0].extent)
    return any(
        isinstance(n, Compute)
        and n.target.tensor == c.target.tensor
        and n.domain.guard is None
        and n.accumulate is None
        and len(n.domain.axes) == 1
        and fold_size(n.domain.axes[0].extent) == rows
        and n.target.index == (Sym(n.domain.axes[0].name), Const(k))
        for n in later
    )


def _self_copy(c: Compute) -> bool:
    e = c.expr
    return isinstance(e, Read) and e.tensor == c.target.tensor and e.index == c.target.index
