"""``guards-to-domains``: index guards become iteration domains (intent -> intent).

Before::  y[i] = x[i - 1] - 2 x[i] + x[i + 1]   for i < N where index(i) >= 1 && index(i) < N - 1
After::   y[i + 1] = x[i] - 2 x[i + 1] + x[i + 2] for i < N - 2

Before::  y[i] = select(index(i) > 0 && index(i) < N - 1, A(i), B(i))   for i < N
After::   y[i] = B(i) for i < N ;  y[i + 1] = A(i + 1) for i < N - 2       (the second overwrites)

A guard that is a conjunction of bounds ``lo <= i < hi`` and a residue ``i % m == r`` on single
axes is folded into the axis (``i -> m*i' + lo``), so the tiled layouts never evaluate a predicate
per element.  When such a guard leaves elements of an ``inout`` tensor unwritten, a copy of the
old values is written first (ports never update inputs in place, reference §14.5).  Guards that
depend on data are left for the lowering to refuse by name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir import uniform
from cuda2nki.ir.nodes import (
    Access,
    Add,
    Axis,
    Binary,
    CeilDiv,
    Compute,
    Const,
    Domain,
    Dyn,
    Expr,
    FloorDiv,
    IndexValue,
    Kernel,
    Lit,
    Max,
    Min,
    Mod,
    Mul,
    Param,
    Read,
    Reduce,
    Select,
    SizeExpr,
    Sub,
    Sym,
    Unary,
)
from cuda2nki.ir.ops import Idiom, Op, Role
from cuda2nki.passes._analysis import covers_target, transform
from cuda2nki.passes._clamp import clamped_read
from cuda2nki.passes._edges import edge_ranges, shifted_reads
from cuda2nki.passes._index import linear
from cuda2nki.passes._joint_cover import jointly_covered
from cuda2nki.passes._masked_select import masked_select, merge_complements
from cuda2nki.passes._out_fill import zero_filled
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.passes.fold_sizes import fold_size

_CMP = {Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ}
_FLIP = {Op.LT: Op.GT, Op.GT: Op.LT, Op.LE: Op.GE, Op.GE: Op.LE, Op.EQ: Op.EQ}


@dataclass(frozen=True)
class GuardsToDomainsPass(Pass):
    name: ClassVar[str] = "guards-to-domains"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        if kernel.is_scheduled:
            return kernel
        body: list = []
        carried: set[str] = set()
        first_write: dict[str, int] = {}
        kernel = kernel.replace(body=zero_filled(kernel, _own_elements))
        joint = jointly_covered(kernel)  # fields of records, each written by its own statement
        written: set[str] = set()  # tensors a statement so far wrote
        for s in _complements(merge_complements(kernel)):
            for c in _rewrite(s, kernel, frozenset(written)) if isinstance(s, Compute) else [s]:
                if isinstance(c, Compute):
                    written.add(c.target.tensor)
                if isinstance(c, Compute) and _is_carry_over(c):
                    if c.target.tensor in joint and not _is_carry_over(s):
                        continue  # the statements together write every element
                    # the old values are copied once, before the first write: a copy after a
                    # write (the guarded arm of a select whose other arm wrote everywhere)
                    # would undo the writes of the statements between
                    if c.target.tensor in carried:
                        continue
                    carried.add(c.target.tensor)
                    at = first_write.get(c.target.tensor)
                    if at is not None:
                        body.insert(at, c)
                        first_write = {t: k + (k >= at) for t, k in first_write.items()}
                        continue
                elif isinstance(c, Compute):
                    first_write.setdefault(c.target.tensor, len(body))
                body.append(c)
        return kernel.replace(body=tuple(body))


def _complements(stmts: tuple) -> list:
    """``t[..] = A where G`` followed by ``t[..] = B where not G`` over the same domain: the
    first writes everywhere (the second overwrites what ``G`` excluded), so only the second keeps
    a guard -- the interior of a boundary-copy stencil, which becomes a narrowed domain."""
    out = list(stmts)
    for k in range(len(out) - 1):
        a, b = out[k], out[k + 1]
        if not (isinstance(a, Compute) and isinstance(b, Compute)):
            continue
        if a.domain.guard is None or b.domain.guard is None or a.accumulate or b.accumulate:
            continue
        if a.target.tensor != b.target.tensor or len(a.domain.axes) != len(b.domain.axes):
            continue
        if any(x.extent != y.extent for x, y in zip(a.domain.axes, b.domain.axes)):
            continue
        names = {y.name: x.name for x, y in zip(a.domain.axes, b.domain.axes)}

        def rename(n: Any, names: dict = names) -> Any:
            return Sym(names[n.name]) if isinstance(n, Sym) and n.name in names else n

        if transform(b.target.index, rename) != a.target.index:
            continue
        if _terms(transform(b.domain.guard, rename), Op.LAND) != _terms(
            _negation(a.domain.guard), Op.LAND
        ):
            continue
        out[k] = a.replace(domain=Domain(a.domain.axes))
    return out


_NEG = {Op.EQ: Op.NE, Op.NE: Op.EQ, Op.LT: Op.GE, Op.GE: Op.LT, Op.LE: Op.GT, Op.GT: Op.LE}


def _negation(e: Expr) -> Expr:
    if isinstance(e, Binary) and e.op in (Op.LAND, Op.LOR):
        op = Op.LOR if e.op == Op.LAND else Op.LAND
        return Binary(op, _negation(e.a), _negation(e.b), loc=e.loc)
    if isinstance(e, Binary) and e.op in _NEG:
        return Binary(_NEG[e.op], e.a, e.b, loc=e.loc)
    return Unary(Op.LNOT, e, loc=getattr(e, "loc", None))


def _terms(e: Expr, op: Op) -> list[str]:
    """The operands of a chain of ``op`` as a sorted list of spellings (order-free)."""
    if isinstance(e, Binary) and e.op == op:
        return sorted(_terms(e.a, op) + _terms(e.b, op))
    return [repr(e)]


def _is_carry_over(c: Compute) -> bool:
    return (
        isinstance(c.expr, Read)
        and c.expr.tensor == c.target.tensor
        and c.expr.index == c.target.index
        and c.domain.guard is None
        and c.accumulate is None
    )


def _carry_over(c: Compute, kernel: Kernel) -> Compute:
    """``t[...] = t[...]`` over the whole of inout tensor ``t``: old values survive partial writes."""
    decl = kernel.tensors[c.target.tensor]
    axes = tuple(Axis(f"_k{n}", dim) for n, dim in enumerate(decl.shape))
    index = tuple(Sym(a.name) for a in axes)
    return Compute(
        Access(decl.name, index, loc=c.loc), Domain(axes), Read(decl.name, index, loc=c.loc),
        idiom=Idiom.MAP, loc=c.loc,
    )  # fmt: skip


def _normalise(c: Compute) -> Compute:
    """Index bounds on a reduction's own axis become its extent; an accumulating write of a
    whole reduction (``out[0] add= reduce(...)``) becomes ``out[0] = out[0] + reduce(...)``, and
    so does one whose points each write their own element (per-row sums added across blocks
    with atomics: ``out[i] add= reduce(add, j: ...) for i < R``)."""
    c = c.replace(expr=_fold_reduce_bounds(c.expr))
    if c.accumulate is not None and c.domain.guard is None and _own_elements(c):
        old = Read(c.target.tensor, c.target.index, loc=c.loc)
        c = c.replace(accumulate=None, expr=Binary(c.accumulate, old, c.expr, loc=c.loc))
    return c


def _own_elements(c: Compute) -> bool:
    """Distinct points of the domain write distinct elements: the target index is the domain's
    axes, each once, beside indices that do not move (no two points combine into one)."""
    axes = set(c.domain.names)
    seen: list[str] = []
    for ix in c.target.index:
        if isinstance(ix, Sym) and ix.name in axes:
            seen.append(ix.name)
        elif isinstance(ix, Dyn) or ix.free_syms() & axes:
            return False
    return len(seen) == len(set(seen)) == len(axes)


def _fold_reduce_bounds(e: Any) -> Any:
    if isinstance(e, Reduce) and e.where is not None and len(e.axes) == 1:
        ax = e.axes[0]
        fake = Compute(Access("_", ()), Domain((Axis(ax.name, ax.extent),)), e.body)
        bounds = _bounds(e.where, fake)
        if bounds is not None and set(bounds) == {ax.name} and bounds[ax.name].mod is None:
            rng = bounds[ax.name]
            restricted = _restrict(fake.replace(domain=Domain(fake.domain.axes)), bounds)
            new_ax = ax.replace(extent=restricted.domain.axes[0].extent)
            return e.replace(axes=(new_ax,), body=_fold_reduce_bounds(restricted.expr), where=None)
            del rng
    if dataclasses.is_dataclass(e) and not isinstance(e, type) and isinstance(e, Expr):
        changes = {}
        for f in dataclasses.fields(e):
            old = getattr(e, f.name)
            if isinstance(old, Expr):
                new = _fold_reduce_bounds(old)
                if new is not old:
                    changes[f.name] = new
        return dataclasses.replace(e, **changes) if changes else e
    return e


def _rewrite(c: Compute, kernel: Kernel, written: frozenset[str] = frozenset()) -> list[Compute]:
    c = _normalise(c)
    out: list[Compute] = []
    decl = kernel.tensors.get(c.target.tensor)
    inout = decl is not None and decl.role == Role.INOUT and c.accumulate is None
    if c.domain.guard is None and c.accumulate is None:
        split = uniform.branches(c.expr, set(kernel.scalars))
        if split is not None:  # selects on flags (a switch): one statement per outcome
            parts = [
                _guarded_by(x, cond)
                for cond, e in split
                for x in _rewrite(c.replace(expr=e), kernel)
            ]
            # old values are copied before any branch writes (a branch that keeps them, the
            # default of a switch, is that copy alone)
            return [x for x in parts if _is_carry_over(x)] + [
                x for x in parts if not _is_carry_over(x)
            ]
    if (
        inout
        and c.domain.guard is None
        and not isinstance(c.expr, Select)
        and not covers_target(c, kernel)
    ):
        return [_carry_over(c, kernel), c]
    if c.domain.guard is None and not isinstance(c.expr, Select) and c.accumulate is None:
        hoisted = _hoist_select(c)
        if hoisted is not None:
            return _rewrite(hoisted, kernel)
    if c.domain.guard is None and isinstance(c.expr, Select) and c.accumulate is None:
        bounds = _bounds(c.expr.cond, c)
        flipped = _flip_equality(c.expr)
        if bounds is None and flipped is not None and _bounds(flipped.cond, c) is not None:
            # select(i == 0, A, B) as select(i != 0, B, A): A everywhere, then B on i > 0 (B
            # never runs where the kernel would not, e.g. reading x[i - 1] at i == 0)
            return _rewrite(c.replace(expr=flipped), kernel)
        edges = edge_ranges(c, bounds, _Range) if bounds is not None else None
        if edges is None and bounds is not None and shifted_reads(c.expr.b, c):
            edges = edge_ranges(c, bounds, _Range, whole_ok=False)
        if bounds is not None and edges is not None:
            # B on the edge pieces, A on the interior: together they write the whole domain
            pieces = [_narrowed(c.replace(expr=c.expr.b), e, kernel) for e in edges]
            writes = [x for p in pieces for x in p] + _narrowed(
                c.replace(expr=c.expr.a), bounds, kernel
            )
            copies = [_carry_over(c, kernel)] if inout and not _whole_domain(c, kernel) else []
            return copies + [x for x in writes if not _is_carry_over(x)]
        if bounds is not None:
            whole = c.replace(expr=c.expr.b)
            part = c.replace(expr=c.expr.a, domain=Domain(c.domain.axes, c.expr.cond))
            return [*_rewrite(whole, kernel), *_rewrite(part, kernel)]
    if c.domain.guard is None:
        # a select on data over a domain short of the inout target: the old values stay
        keep = inout and isinstance(c.expr, Select) and not covers_target(c, kernel)
        return [_carry_over(c, kernel), c] if keep else [c]
    uni, rest = uniform.split(c.domain.guard, set(kernel.scalars))
    if uni is not None:  # a flag: decided when the kernel is traced (lower-tiles branches on it)
        inner = _rewrite(c.replace(domain=Domain(c.domain.axes, rest)), kernel, written)
        copies = [x for x in inner if _is_carry_over(x)]
        if inout and not copies:  # with the flag false, nothing is written
            copies = [_carry_over(c, kernel)]
        writes = [x for x in inner if not _is_carry_over(x)]
        return copies + [_guarded_by(x, uni) for x in writes]
    bounds = _bounds(c.domain.guard, c)
    if bounds is None:
        return [masked_select(c, kernel, written) or c]
    if inout:
        out.append(_carry_over(c, kernel) if not _whole_domain(c, kernel) else _keep(c))
    narrowed = _restrict(c, bounds)
    if _hoist_select(narrowed) is not None:  # selects left inside the narrowed statement
        out.extend(_rewrite(narrowed, kernel))
    else:
        out.append(narrowed)
    return out


def _narrowed(c: Compute, bounds: dict[str, _Range], kernel: Kernel) -> list[Compute]:
    """``c`` on the part of its domain within ``bounds``, selects left inside it split too."""
    narrowed = _restrict(c, bounds)
    return _rewrite(narrowed, kernel) if _hoist_select(narrowed) is not None else [narrowed]


#: most index-bound selects hoisted out of one statement (each doubles the statements)
_MAX_HOIST = 4


def _hoist_select(c: Compute) -> Compute | None:
    """``f(select(index-bounds, a, b))`` as ``select(index-bounds, f(a), f(b))`` (clamped
    boundaries inside a larger expression), so the select splits into domains below."""
    nodes = list(_elementwise_nodes(c.expr))
    if any(isinstance(x, Reduce) for x in nodes):
        return None
    # a choice between two elements of one tensor: a clamped or mirrored boundary
    sels = [
        x
        for x in nodes
        if isinstance(x, Select)
        and isinstance(x.a, Read)
        and isinstance(x.b, Read)
        and x.a.tensor == x.b.tensor
    ]
    if len(c.domain.axes) >= 2:  # clamped neighbours of a 2-D stencil: left for clamp-reads
        extents = {a.name: a.extent for a in c.domain.axes}
        sels = [x for x in sels if clamped_read(x, extents) is None]
    if not sels or len({x.cond for x in sels}) > _MAX_HOIST:
        return None
    for sel in sels:
        if _bounds(sel.cond, c) is not None:
            a = _replace_node(c.expr, sel, sel.a)
            b = _replace_node(c.expr, sel, sel.b)
            return c.replace(expr=Select(sel.cond, a, b, loc=sel.loc))
    return None


def _elementwise_nodes(e: Any):
    """The expression nodes of ``e`` outside reductions, preorder."""
    yield e
    if isinstance(e, Reduce):
        return
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, Expr):
            yield from _elementwise_nodes(v)


def _replace_node(e: Any, old: Expr, new: Expr) -> Any:
    if e == old:
        return new
    if not isinstance(e, Expr) or isinstance(e, Reduce):
        return e
    kw = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, Expr):
            r = _replace_node(v, old, new)
            if r is not v:
                kw[f.name] = r
    return dataclasses.replace(e, **kw) if kw else e


def _whole_domain(c: Compute, kernel: Kernel) -> bool:
    return covers_target(c.replace(domain=Domain(c.domain.axes)), kernel)


def _keep(c: Compute) -> Compute:
    read = Read(c.target.tensor, c.target.index, loc=c.loc)
    return Compute(c.target, Domain(c.domain.axes), read, idiom=c.idiom, attrs=c.attrs, loc=c.loc)


@dataclass
class _Range:
    lo: list[SizeExpr] = dataclasses.field(default_factory=list)
    hi: list[SizeExpr] = dataclasses.field(default_factory=list)
    mod: tuple[int, int] | None = None


def _bounds(cond: Expr, c: Compute) -> dict[str, _Range] | None:
    axes = set(c.domain.names)
    out: dict[str, _Range] = {}
    extents = {a.name: a.extent for a in c.domain.axes}
    for term in _conjuncts(cond):
        if not _one_bound(_ends(term, extents), axes, out):
            return None
    return out


def _ends(term: Expr, extents: dict) -> Expr:
    """``i != 0`` is ``i > 0`` and ``i + 1 != N`` is ``i + 1 < N`` on an axis ``i < N``."""
    if not (isinstance(term, Binary) and term.op == Op.NE):
        return term
    left, right = _size(term.a), _size(term.b)
    if left is None or right is None:
        return term
    for x, y, ax_side, other in ((left, right, term.a, term.b), (right, left, term.b, term.a)):
        off: SizeExpr = Const(0)
        if isinstance(x, Add) and isinstance(x.a, Const):
            off, x = x.a, x.b
        elif isinstance(x, Add) and isinstance(x.b, Const):
            off, x = x.b, x.a
        if not (isinstance(x, Sym) and x.name in extents):
            continue
        if _equal_sizes(y, off):  # i + c != c: i > 0
            return Binary(Op.GT, ax_side, other, loc=term.loc)
        if _equal_sizes(y - off + 1, extents[x.name]):  # i + c != N - 1 + c: i + c < N - 1 + c
            return Binary(Op.LT, ax_side, other, loc=term.loc)
    return term


def _equal_sizes(a: SizeExpr, b: SizeExpr) -> bool:
    """``a == b`` for every value of their symbols: equal spellings, or affine expressions with
    integer coefficients whose difference has every coefficient zero."""
    if a == b:
        return True
    syms = a.free_syms() | b.free_syms()
    lin = linear(a - b, frozenset(syms))
    if lin is None:
        return False
    try:
        return all(_const_value(c) == 0 for c in lin.values())
    except (KeyError, TypeError):
        return False


def _const_value(e: SizeExpr) -> int:
    if e.free_syms():
        raise KeyError(str(e))
    return int(e.evaluate({}))


def _flip_equality(sel: Select) -> Select | None:
    """``select(a == b, x, y)`` as ``select(a != b, y, x)`` (None for another condition)."""
    cond = sel.cond
    if not (isinstance(cond, Binary) and cond.op == Op.EQ):
        return None
    ne = Binary(Op.NE, cond.a, cond.b, loc=cond.loc)
    return Select(ne, sel.b, sel.a, loc=sel.loc)


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == Op.LAND:
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


def _one_bound(term: Expr, axes: set[str], out: dict[str, _Range]) -> bool:
    if not (isinstance(term, Binary) and term.op in _CMP):
        return False
    left, right = _size(term.a), _size(term.b)
    if left is None or right is None:
        return False
    op = term.op
    if not (left.free_syms() & axes) and right.free_syms() & axes:
        left, right, op = right, left, _FLIP[op]
    # ``i + c < X`` is ``i < X - c``
    while isinstance(left, (Add, Sub)):  # constant offsets only
        if isinstance(left.b, Const):
            left, right = left.a, (right - left.b if isinstance(left, Add) else right + left.b)
        elif isinstance(left, Add) and isinstance(left.a, Const):
            left, right = left.b, right - left.a
        else:
            break
    left, right, op = _unscale(left, right, op)
    if op == Op.EQ and isinstance(left, Mod) and isinstance(left.a, Sym) and left.a.name in axes:
        if isinstance(left.b, Const) and isinstance(right, Const) and left.b.value > 0:
            rng = out.setdefault(left.a.name, _Range())
            rng.mod = (left.b.value, right.value % left.b.value)
            return True
        return False
    if not (isinstance(left, Sym) and left.name in axes) or right.free_syms() & axes:
        return False
    rng = out.setdefault(left.name, _Range())
    if op == Op.GE:
        rng.lo.append(right)
    elif op == Op.GT:
        rng.lo.append(right + 1)
    elif op == Op.LT:
        rng.hi.append(right)
    elif op == Op.LE:
        rng.hi.append(right + 1)
    else:
        return False
    return True


def _unscale(left: SizeExpr, right: SizeExpr, op: Op) -> tuple[SizeExpr, SizeExpr, Op]:
    """``K * i < X`` is ``i < ceil(X / K)`` (``<=``: ``i < X // K + 1``; ``>=``: ``i >= ceil(X / K)``;
    ``>``: ``i >= X // K + 1``) for a positive constant ``K``: the first lane of a thread
    handling ``K`` consecutive elements, bounded by the element count."""
    if not isinstance(left, Mul) or op == Op.EQ:
        return left, right, op
    k, v = (left.a, left.b) if isinstance(left.a, Const) else (left.b, left.a)
    if not (isinstance(k, Const) and k.value > 0 and isinstance(v, Sym)):
        return left, right, op
    if op in (Op.LT, Op.GE):
        return v, CeilDiv(right, k), op
    return v, FloorDiv(right, k) + 1, Op.LT if op == Op.LE else Op.GE


def _size(e: Expr) -> SizeExpr | None:
    """An index-valued expression as a size expression (None when it involves data)."""
    if isinstance(e, IndexValue):
        return e.expr
    if isinstance(e, Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return Const(e.value)
    if isinstance(e, Param):
        return Sym(e.name)
    if isinstance(e, Binary) and e.op in (Op.ADD, Op.SUB, Op.MUL, Op.MOD):
        a, b = _size(e.a), _size(e.b)
        if a is None or b is None:
            return None
        return {Op.ADD: a + b, Op.SUB: a - b, Op.MUL: a * b, Op.MOD: Mod(a, b)}[e.op]
    return None


def _restrict(c: Compute, bounds: dict[str, _Range]) -> Compute:
    axes, subst = [], {}
    for ax in c.domain.axes:
        rng = bounds.get(ax.name)
        if rng is None:
            axes.append(ax)
            continue
        lo: SizeExpr = Const(0)
        for b in rng.lo:
            if _nonpositive(b):  # below the axis' own start (a bound restated on a shifted axis)
                continue
            lo = b if lo == Const(0) else Max(lo, b)
        hi = ax.extent
        for b in rng.hi:
            hi = Min(hi, b)
        if rng.mod is not None and lo == Const(0):
            m, r = rng.mod
            subst[ax.name] = Const(m) * Sym(ax.name) + r
            axes.append(ax.replace(extent=_at_least_zero(CeilDiv(hi - r, m))))
        elif lo == Const(0):  # only an upper bound: the axis keeps its start
            axes.append(ax.replace(extent=_at_least_zero(hi)))
        else:
            subst[ax.name] = Sym(ax.name) + lo
            extent = hi - lo if lo != Const(0) or hi != ax.extent else hi
            axes.append(ax.replace(extent=_at_least_zero(extent)))
    body = _subst(c.replace(domain=Domain(tuple(axes))), subst)
    return body.replace(domain=Domain(tuple(axes)))


def _nonpositive(e: SizeExpr) -> bool:
    v = fold_size(e)
    return isinstance(v, Const) and v.value <= 0


def _at_least_zero(e: SizeExpr) -> SizeExpr:
    """A narrowed extent clamped at 0: ``n - 2`` is empty, not negative, when ``n < 2`` (a
    negative extent would turn ``n % chunk`` tails into work on rows that do not exist)."""
    if isinstance(e, Const):
        return Const(max(e.value, 0))
    if isinstance(e, Sym) or (isinstance(e, Max) and Const(0) in (e.a, e.b)):
        return e
    return Max(e, Const(0))


def _subst(node: Any, subst: dict[str, SizeExpr]) -> Any:
    """Replace axis symbols everywhere in ``node`` (indices, index values, extents); domain
    extents are rebuilt by the caller."""
    return transform(
        node,
        lambda x: subst.get(x.name, x) if isinstance(x, Sym) else x,
        skip=(Axis, Domain),
    )


def _and(a: Expr | None, b: Expr) -> Expr:
    return b if a is None else Binary(Op.LAND, a, b, loc=b.loc)


def _guarded_by(c: Compute, cond: Expr | None) -> Compute:
    """``c`` run only where ``cond`` (a condition on parameters) holds; a copy of an inout
    tensor's old values runs regardless (once, before its first write: see ``run``)."""
    if cond is None or _is_carry_over(c):
        return c
    return c.replace(domain=c.domain.replace(guard=_and(c.domain.guard, cond)))
