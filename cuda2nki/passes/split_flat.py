"""``split-flat``: a flat index taken apart by ``/`` and ``%`` becomes a row axis and a column axis.

Elementwise kernels over a flattened ``[rows, C]`` tensor often run one flat index and find the
row and column with ``/`` and ``%`` (a bias ``bias[i % OC]``, a per-row statistic ``rstd[i / C]``).
As one axis, those reads are neither the element itself nor a broadcast, so no tile layout
takes them.  When the flat extent is a product with ``C`` as a factor, the axis splits exactly:
``i = r * C + c`` with ``r < extent / C`` and ``c < C``; ``i % C`` is ``c``, ``i / C`` is ``r``
and the flat accesses become ``x[r * C + c]`` (a whole row of a 1-D tensor per partition).

Before::  out[i] = out[i] + bias[i % OC] for i < B * T * OC
After::   out[r * OC + c] = out[r * OC + c] + bias[c] for r < B * T, c < OC

Each parallel axis of a domain without accumulation splits, by the one divisor that divides its
other divisors (``i / V`` and ``i / (T*V)``: by ``V``, and the row axis then again by ``T``), and
only when that divisor divides the extent as written (a factor of a product, or both numbers): a
flat extent that is not a multiple of the row length keeps its one axis.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import (
    Add,
    Axis,
    Compute,
    Const,
    Domain,
    Dyn,
    FloorDiv,
    Kernel,
    Mod,
    Mul,
    SizeExpr,
    Sym,
)
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.rewrite import transform


@dataclass(frozen=True)
class SplitFlatPass(Pass):
    name: ClassVar[str] = "split-flat"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        body = tuple(_split(s) if isinstance(s, Compute) else s for s in kernel.body)
        return kernel.replace(body=body)


def _split(c: Compute) -> Compute:
    if not c.domain.axes or c.accumulate is not None:
        return c
    for first in [a.name for a in c.domain.axes]:
        name: str | None = first
        for _ in range(8):  # a row axis taken apart again (``(i / V) % T``: i over B*T*V)
            c, name = _split_axis(c, name)
            if name is None:
                break
    return c


def _split_axis(c: Compute, name: str) -> tuple[Compute, str | None]:
    """Split the axis ``name`` by the divisor of its ``/`` and ``%`` that divides all the
    others; returns the statement and the new row axis (None when nothing split)."""
    k = next(n for n, a in enumerate(c.domain.axes) if a.name == name)
    ax = c.domain.axes[k]
    i = Sym(ax.name)
    divisors = set()
    for node in _sizes_of(c):
        divisors |= _divisors(node, i)
    d, multiples = _smallest(divisors)
    if d is None:
        return c, None
    rows = _quotient(ax.extent, d)
    if rows is None or rows == Const(1):
        return c, None  # not a whole number of rows, or one row: the flat layout is as good
    taken = _all_syms(c)
    r, col = _fresh(f"{ax.name}_r", taken), _fresh(f"{ax.name}_c", taken)
    sub = _Substitution(i, d, Sym(r), Sym(col), multiples)
    out = transform(c, sub.node, skip=(SizeExpr,))
    new = (Axis(r, rows, ax.kind, loc=ax.loc), Axis(col, d, ax.kind, loc=ax.loc))
    axes = out.domain.axes[:k] + new + out.domain.axes[k + 1 :]
    return out.replace(domain=Domain(axes, out.domain.guard)), r


def _smallest(divisors: set) -> tuple[SizeExpr | None, dict]:
    """The one divisor that divides every other, with each other's quotient by it
    (``{V, T*V}``: ``V``, and ``T*V`` is ``T`` rows of ``V``)."""
    for d in divisors:
        multiples = {o: _quotient(o, d) for o in divisors if o != d}
        if all(q is not None and q != Const(1) for q in multiples.values()):
            return d, multiples
    return None, {}


@dataclass(frozen=True)
class _Substitution:
    """``i % d -> c``, ``i / d -> r``, any other ``i -> r * d + c``, in every size of a node."""

    i: Sym
    d: SizeExpr
    r: Sym
    c: Sym
    multiples: dict = dataclasses.field(default_factory=dict)

    def node(self, x: Any) -> Any:
        names = getattr(type(x), "_sizes", ())
        if not names or isinstance(x, SizeExpr):
            return x
        changes = {n: self.value(getattr(x, n)) for n in names}
        return dataclasses.replace(x, **changes)

    def value(self, v: Any) -> Any:
        if isinstance(v, tuple):
            return tuple(self.size(e) for e in v)
        return self.size(v) if isinstance(v, SizeExpr) else v

    def size(self, e: SizeExpr) -> SizeExpr:
        if isinstance(e, Mod) and e.a == self.i and e.b == self.d:
            return self.c
        if isinstance(e, FloorDiv) and e.a == self.i and e.b == self.d:
            return self.r
        if isinstance(e, FloorDiv) and e.a == self.i and e.b in self.multiples:
            return FloorDiv(self.r, self.multiples[e.b])  # i / (k*d) = (i / d) / k
        if isinstance(e, Mod) and e.a == self.i and e.b in self.multiples:
            return Add(Mul(Mod(self.r, self.multiples[e.b]), self.d), self.c)
        if e == self.i:
            return Add(Mul(self.r, self.d), self.c)
        if isinstance(e, Dyn):
            return e.replace(expr=transform(e.expr, self.node, skip=(SizeExpr,)))
        if isinstance(e, (Add, Mul, Mod, FloorDiv)) or hasattr(e, "a"):
            return e.replace(a=self.size(e.a), b=self.size(e.b))
        return e


def _sizes_of(c: Any) -> list[SizeExpr]:
    """Every size expression of a statement (indices, extents, index values) or of a value
    expression inside one."""
    out: list[SizeExpr] = []

    def grab(x: Any) -> Any:
        for n in getattr(type(x), "_sizes", ()):
            v = getattr(x, n)
            out.extend(v if isinstance(v, tuple) else (v,))
        return x

    transform(c, grab, skip=(SizeExpr,))
    return out


def _divisors(e: Any, i: Sym) -> set:
    """The ``d`` of every ``i % d`` and ``i / d`` inside ``e`` (Dyn values included)."""
    out: set = set()
    if isinstance(e, (Mod, FloorDiv)) and e.a == i:
        out.add(e.b)
    if isinstance(e, Dyn):
        for s in _sizes_of(e.expr):
            out |= _divisors(s, i)
    for n in getattr(type(e), "_sizes", ()):
        v = getattr(e, n)
        for y in v if isinstance(v, tuple) else (v,):
            if isinstance(y, SizeExpr):
                out |= _divisors(y, i)
    return out


def _factors(e: SizeExpr) -> list[SizeExpr]:
    if isinstance(e, Mul):
        return _factors(e.a) + _factors(e.b)
    return [e]


def _quotient(extent: SizeExpr, d: SizeExpr) -> SizeExpr | None:
    """``extent / d`` when ``d`` divides it as written; None otherwise."""
    if isinstance(extent, Const) and isinstance(d, Const):
        ok = d.value > 0 and extent.value % d.value == 0
        return Const(extent.value // d.value) if ok else None
    rest = _factors(extent)
    for f in _factors(d):
        if f not in rest:
            return None
        rest.remove(f)
    if not rest:
        return Const(1)
    out = rest[0]
    for f in rest[1:]:
        out = Mul(out, f)
    return out


def _all_syms(c: Compute) -> set[str]:
    out: set[str] = set()
    for s in _sizes_of(c):
        out |= s.free_syms()
    return out


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}{n}"
    return name
