"""Outputs that are accumulated into before anything writes them.

An ``out`` tensor starts as the host left it: zero-filled (``cudaMemset``), which is what the
binding's ``out`` role promises and what ``check`` gives the CUDA kernel.  An atomic into it
(``atomicAdd(counter, 1)``) combines with those zeros.  The port's output has no such contents
(a fresh HBM tensor), so reading it back would add onto whatever the memory held: the tensor is
zero-filled first, as the host did.  ``inout`` tensors are read as they are."""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.ir.nodes import (
    Access,
    Axis,
    Binary,
    Compute,
    Const,
    Domain,
    Kernel,
    Lit,
    Sym,
    TensorDecl,
)
from cuda2nki.ir.ops import Idiom, Op, Role


def zero_filled(kernel: Kernel, own: Callable[[Compute], bool]) -> tuple:
    """``kernel.body`` where each ``out`` tensor whose first write accumulates starts from zero:
    a write whose points each update their own element (``own``) combines with a zero literal
    instead of a read; any other (a scatter, a guarded domain) follows a zero fill."""
    body: list = []
    written: set[str] = set()
    for s in kernel.body:
        if not isinstance(s, Compute) or s.target.tensor in written:
            body.append(s)
            continue
        written.add(s.target.tensor)
        decl = kernel.tensors.get(s.target.tensor)
        if s.accumulate is None or decl is None or decl.role != Role.OUT:
            body.append(s)
        elif s.domain.guard is None and own(s) and _covers(s, decl):
            body.append(s.replace(accumulate=None, expr=_onto_zero(decl, s)))
        else:
            body.extend((_fill(decl, s), s))
    return tuple(body)


def _covers(c: Compute, decl: TensorDecl) -> bool:
    """Every element of the target is written: each index a distinct domain axis as long as the
    dim, or the only element of a dim of one."""
    extents = {a.name: a.extent for a in c.domain.axes}
    seen: set[str] = set()
    for ix, dim in zip(c.target.index, decl.shape):
        if isinstance(ix, Sym) and ix.name in extents and ix.name not in seen:
            seen.add(ix.name)
            if extents[ix.name] != dim:
                return False
        elif not (ix == Const(0) or (isinstance(ix, Lit) and ix.value == 0)) or dim != Const(1):
            return False
    return True


def _zero(decl: TensorDecl, c: Compute) -> Lit:
    is_float = decl.dtype.startswith(("float", "bfloat"))
    return Lit(0.0 if is_float else 0, decl.dtype, loc=c.loc)


def _onto_zero(decl: TensorDecl, c: Compute):
    if c.accumulate is Op.ADD:
        return c.expr
    return Binary(c.accumulate, _zero(decl, c), c.expr, loc=c.loc)


def _fill(decl: TensorDecl, c: Compute) -> Compute:
    axes = tuple(Axis(f"_z{n}", dim) for n, dim in enumerate(decl.shape))
    index = tuple(Sym(a.name) for a in axes)
    return Compute(
        Access(decl.name, index, loc=c.loc), Domain(axes), _zero(decl, c), idiom=Idiom.MAP,
        loc=c.loc,
    )  # fmt: skip
