"""A map guarded by an index condition that no domain can express, as a select (not a pass).

A guard such as ``c > r`` (a triangle of a matrix) or ``(i / T) % T < i % T`` (the causal part
of every (T, T) block of a flat tensor) bounds no single axis, so ``guards-to-domains`` cannot
narrow a domain to it.  Where the elements the guard excludes keep a value the port can name --
the old contents of an ``inout`` tensor or of a tensor an earlier statement wrote everywhere, or
the zeros an ``out`` tensor starts with -- the statement writes the whole domain instead::

    att[i] = -inf for i < N where index(i // T % T) < index(i % T)
    att[i] = select(index(i // T % T) < index(i % T), -inf, att[i]) for i < N

Reads of a tensor in the intent are of its values before the kernel, so only a tensor's first
write keeps old elements this way.  Two statements with complementary guards over one target
(the two arms of ``if (c > r) ... else ...``, spelled ``i < j`` and ``j < i + 1``) become one
select first (:func:`merge_complements`): the second arm's reads of the target see old values
exactly where the first arm did not write.

The select evaluates the guarded expression everywhere, so it applies only where that reads
nothing outside its tensors' bounds: each read indexes with plain domain axes or with indices
that do not move.
"""

from __future__ import annotations

from typing import Any

from cuda2nki.ir.nodes import (
    Add,
    Binary,
    Compute,
    Const,
    Domain,
    Expr,
    IndexValue,
    Kernel,
    Lit,
    Mul,
    Read,
    Select,
    SizeExpr,
    Sub,
    Sym,
    Unary,
)
from cuda2nki.ir.ops import Op, Role
from cuda2nki.passes._analysis import index_only, reads, reductions, transform


def masked_select(c: Compute, kernel: Kernel, written: frozenset[str]) -> Compute | None:
    """``c`` (a guarded map, the first write of its target unless its target is in ``written``)
    as an unguarded select keeping the excluded elements, or None."""
    guard = c.domain.guard
    if guard is None or c.accumulate is not None or not index_only(guard):
        return None
    if not _own_elements(c) or not _reads_in_bounds(c):
        return None
    decl = kernel.tensors.get(c.target.tensor)
    if decl is None:
        return None
    if c.target.tensor in written:
        return None  # a read would give the values before the kernel, not the current ones
    if decl.role == Role.INOUT:
        keep = Read(c.target.tensor, c.target.index, loc=c.loc)
    elif decl.role == Role.OUT:
        keep = Lit(0, decl.dtype, loc=c.loc)
    else:
        return None
    return c.replace(domain=Domain(c.domain.axes), expr=Select(guard, c.expr, keep, loc=c.loc))


def _own_elements(c: Compute) -> bool:
    """Each point of the domain writes its own element: the target indexed by distinct axes."""
    names = [ix.name for ix in c.target.index if isinstance(ix, Sym)]
    axes = set(c.domain.names)
    moving = [ix for ix in c.target.index if ix.free_syms() & axes]
    return len(moving) == len(names) == len(set(names)) and set(names) == axes


def _reads_in_bounds(c: Compute) -> bool:
    axes = set(c.domain.names)
    return all(
        isinstance(ix, Sym) or not (ix.free_syms() & axes)
        for rd in reads(c.expr)
        for ix in rd.index
    )


def merge_complements(kernel: Kernel) -> tuple:
    """Consecutive maps of one target over one domain as one statement: two guarded by index
    conditions that are each other's negation as ``select(guard, first, second)``; a write of
    every element followed by one guarded by an index condition as
    ``select(guard, second, first)`` (the guarded arm written after its complement); two
    under one guard as the second."""
    out: list = []
    for s in kernel.body:
        prev = out[-1] if out else None
        pair = isinstance(prev, Compute) and isinstance(s, Compute)
        merged = _merged(prev, s) if pair and _reads_before_kernel(s, kernel) else None
        if merged is not None:
            out[-1] = merged
        else:
            out.append(s)
    return tuple(out)


def _reads_before_kernel(c: Compute, kernel: Kernel) -> bool:
    """A read of ``c``'s target in it means the value before the kernel, as the port reads it:
    an ``inout`` tensor is read from its input; an ``out`` tensor is read back from the port's
    own output, where an earlier statement's writes would show."""
    decl = kernel.tensors.get(c.target.tensor)
    if decl is not None and decl.role == Role.INOUT:
        return True
    return all(rd.tensor != c.target.tensor for rd in reads(c.expr))


def _merged(a: Compute, b: Compute) -> Compute | None:
    if b.domain.guard is None or a.accumulate or b.accumulate:
        return None
    if a.target.tensor != b.target.tensor or len(a.domain.axes) != len(b.domain.axes):
        return None
    if any(x.extent != y.extent for x, y in zip(a.domain.axes, b.domain.axes)):
        return None
    names = {y.name: x.name for x, y in zip(a.domain.axes, b.domain.axes)}
    bound = {ax.name for r in reductions(b.expr) for ax in r.axes}
    if bound & set(a.domain.names):
        return None  # renaming would capture a reduction's own axis

    def rename(n: Any) -> Any:
        return Sym(names[n.name]) if isinstance(n, Sym) and n.name in names else n

    b = transform(b, rename)
    if b.target.index != a.target.index or not index_only(b.domain.guard):
        return None
    if not (_own_elements(a) and _reads_in_bounds(a) and _reads_in_bounds(b)):
        return None
    g = b.domain.guard
    if a.domain.guard is None:  # b overwrites a where its guard holds
        expr = Select(g, b.expr, _unless(a.expr, g), loc=b.loc)
    elif a.domain.guard == g:  # b overwrites everything a wrote
        return b.replace(domain=Domain(a.domain.axes, g))
    elif index_only(a.domain.guard) and complementary(a.domain.guard, g):
        expr = Select(a.domain.guard, a.expr, b.expr, loc=a.loc)
    else:
        return None
    return a.replace(domain=Domain(a.domain.axes), expr=expr)


def _unless(e: Expr, g: Expr) -> Expr:
    """``e`` where ``g`` does not hold: a select on ``g`` keeps its other arm."""
    while isinstance(e, Select) and e.cond == g:
        e = e.b
    return e


def complementary(g: Expr, h: Expr) -> bool:
    """``h`` holds exactly where ``g`` does not, for integer index values: ``i < j`` and
    ``j < i + 1`` (or ``i >= j``), ``i == c`` and ``i != c``, ``!g`` and ``g``."""
    if isinstance(h, Unary) and h.op == Op.LNOT:
        return h.x == g
    if isinstance(g, Unary) and g.op == Op.LNOT:
        return g.x == h
    if isinstance(g, Binary) and isinstance(h, Binary) and {g.op, h.op} == {Op.EQ, Op.NE}:
        return {(g.a, g.b), (g.b, g.a)} & {(h.a, h.b)} != set()
    dg, dh = _at_most_zero(g), _at_most_zero(h)
    if dg is None or dh is None:
        return False
    # not (d <= 0)  <=>  d >= 1  <=>  1 - d <= 0
    return _sum(dh, _scale(dg, 1)) == {"": 1}


_ORDER = {Op.LT: (1, 1), Op.LE: (1, 0), Op.GT: (-1, 1), Op.GE: (-1, 0)}


def _at_most_zero(e: Expr) -> dict[str, int] | None:
    """``e`` (a comparison of integer index values) as ``d <= 0`` with ``d`` a linear form over
    the spellings of its non-linear terms (key ``""``: the constant)."""
    if not (isinstance(e, Binary) and e.op in _ORDER):
        return None
    a, b = _linear_value(e.a), _linear_value(e.b)
    if a is None or b is None:
        return None
    sign, shift = _ORDER[e.op]
    d = _sum(_scale(a, sign), _scale(b, -sign))
    return _sum(d, {"": shift})


def _linear_value(e: Expr) -> dict[str, int] | None:
    if isinstance(e, IndexValue):
        return _linear(e.expr)
    if isinstance(e, Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return {"": int(e.value)}
    return None


def _linear(e: SizeExpr) -> dict[str, int]:
    if isinstance(e, Const):
        return {"": int(e.value)}
    if isinstance(e, Add):
        return _sum(_linear(e.a), _linear(e.b))
    if isinstance(e, Sub):
        return _sum(_linear(e.a), _scale(_linear(e.b), -1))
    if isinstance(e, Mul):
        for k, x in ((e.a, e.b), (e.b, e.a)):
            if isinstance(k, Const):
                return _scale(_linear(x), int(k.value))
    return {repr(e): 1}


def _scale(d: dict[str, int], k: int) -> dict[str, int]:
    return {t: k * v for t, v in d.items() if k * v}


def _sum(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for t, v in b.items():
        out[t] = out.get(t, 0) + v
    return {t: v for t, v in out.items() if v}
