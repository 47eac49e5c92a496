"""``merge-lanes``: the lanes of a CUDA vector access become one statement over the flat axis.

A ``float4`` (or ``half2``, ``int4``...) kernel handles ``L`` consecutive elements per thread, one
per lane ``.x .y .z .w``; it lifts to ``L`` statements, lane ``c`` writing ``T[L * v + c]`` for
``v < D``.  Lowered one by one they become ``L`` strided DMAs of one element per partition row
each; the same values are one statement over ``u < L * D`` (``u = L * v + c``), which tiles into
contiguous rows.

Before::  dst[4 * i] = max(src[4 * i], 0.0) for i < n4
          dst[1 + 4 * j] = max(src[1 + 4 * j], 0.0) for j < n4
          dst[2 + 4 * k] = max(src[2 + 4 * k], 0.0) for k < n4
          dst[3 + 4 * l] = max(src[3 + 4 * l], 0.0) for l < n4
After::   dst[i] = max(src[i], 0.0) for i < 4 * n4

Statements merge when they are consecutive, write the same tensor with lane offsets
``0 .. L-1`` (in any order) on one domain axis with stride ``L``, have the same domain otherwise,
and are the same computation once each lane's index ``L * v + c + b`` reads as ``u + b``: every
other use of ``v`` becomes ``u // L``.  The lanes may read the target only at the element they
write (then no lane sees another lane's store), and none may gather through data (``Dyn``) or
scan.

A statement over ``u < A`` followed by the same statement over the next ``B`` elements (the scalar
tail of a vector loop, ``T[A + m] ... for m < B``) becomes one statement over ``u < A + B``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import (
    Access,
    Add,
    Axis,
    Binary,
    Compute,
    Const,
    Domain,
    Dyn,
    FloorDiv,
    IndexValue,
    Kernel,
    Mod,
    Mul,
    Read,
    Reduce,
    Scan,
    SizeExpr,
    Sub,
    Sym,
)
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import reads, transform, walk
from cuda2nki.passes._index import linear
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.rewrite import strip_locs

_MAX_LANES = 16


@dataclass(frozen=True)
class MergeLanesPass(Pass):
    name: ClassVar[str] = "merge-lanes"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        body = [_merge_reduce_lanes(s) for s in kernel.body]
        body = _merge_runs(body)
        return kernel.replace(body=tuple(_merge_tails(body)))


# ---------------------------------------------------------------------- lanes


def _merge_runs(body: list) -> list:
    out: list = []
    p = 0
    while p < len(body):
        got = _lane_run(body, p)
        if got is None:
            out.append(body[p])
            p += 1
        else:
            out.append(got[0])
            p += got[1]
    return out


def _lane_run(body: list, p: int) -> tuple[Compute, int] | None:
    """The merged statement of the lanes starting at ``body[p]`` and how many it replaces."""
    first = body[p]
    if not _candidate(first):
        return None
    lane = _lane_dim(first)
    if lane is None:
        return None
    pos, n_lanes = lane
    run = body[p : p + n_lanes]
    if len(run) < n_lanes or not all(_candidate(s) for s in run):
        return None
    if any(len(s.domain.axes) != len(first.domain.axes) for s in run):
        return None
    names = first.domain.names
    renamed = [_rename(s, dict(zip(s.domain.names, names))) for s in run]
    if any(s is None for s in renamed):
        return None
    v = names[pos]
    offsets = [_lane_offset(s, v, n_lanes) for s in renamed]
    if any(o is None for o in offsets):
        return None
    base = min(offsets)  # type: ignore[type-var]
    if sorted(o - base for o in offsets) != list(range(n_lanes)):  # type: ignore[operator]
        return None
    merged = [_as_flat(s, v, n_lanes, o - base) for s, o in zip(renamed, offsets)]  # type: ignore[operator]
    shapes = {strip_locs(m) for m in merged}
    if None in merged or len(shapes) != 1 or not _lane_safe(merged[0]):
        return None
    m = merged[0]
    axes = list(m.domain.axes)
    axes[pos] = axes[pos].replace(extent=_times(n_lanes, axes[pos].extent))
    return m.replace(domain=m.domain.replace(axes=tuple(axes)), loc=first.loc), n_lanes


def _candidate(s: Any) -> bool:
    if not isinstance(s, Compute) or s.accumulate is not None:
        return False
    parts = [s.expr] + ([s.domain.guard] if s.domain.guard is not None else [])
    for e in parts:
        for x in walk(e):
            if isinstance(x, Scan):
                return False
            if isinstance(x, Read) and any(isinstance(i, Dyn) for i in x.index):
                return False
    return not any(isinstance(i, Dyn) for i in s.target.index)


def _lane_dim(s: Compute) -> tuple[int, int] | None:
    """(domain position of the lane axis, lane count) from the target's index."""
    axes = frozenset(s.domain.names)
    for ix in s.target.index:
        lin = linear(ix, axes)
        if lin is None:
            continue
        moving = [a for a in lin if a is not None]
        if len(moving) != 1:
            continue
        k = lin[moving[0]]
        if isinstance(k, Const) and 2 <= k.value <= _MAX_LANES:
            return s.domain.names.index(moving[0]), k.value
    return None


def _rename(s: Compute, names: dict[str, str]) -> Compute | None:
    """``s`` with its domain axes renamed; None where a reduction axis would be captured."""
    taken = set(names) | set(names.values())
    for x in walk(s.expr):
        if isinstance(x, Reduce) and any(a.name in taken for a in x.axes):
            return None
    if all(a == b for a, b in names.items()):
        return s

    def fn(x: Any) -> Any:
        if isinstance(x, Sym) and x.name in names:
            return Sym(names[x.name])
        if isinstance(x, Axis) and x.name in names:
            return x.replace(name=names[x.name])
        return x

    return transform(s, fn)


def _lane_offset(s: Compute, v: str, n_lanes: int) -> int | None:
    """``c + b`` of the target's ``L * v + c + b`` (its integer part)."""
    for ix in s.target.index:
        lin = linear(ix, frozenset({v}))
        if lin is not None and lin.get(v) == Const(n_lanes):
            return _split_const(lin[None])[1]
    return None


def _lane_index(e: SizeExpr, v: str, n_lanes: int, lane: int) -> SizeExpr:
    """Index ``e`` of lane ``lane`` on the flat axis ``v``: ``L * v + lane + b`` -> ``v + b``,
    any other use of ``v`` -> ``v // L``."""
    if v not in e.free_syms():
        return e
    lin = linear(e, frozenset({v}))
    if lin is not None and lin.get(v) == Const(n_lanes):
        rest, k = _split_const(lin[None])
        return _plus(_plus(Sym(v), rest), k - lane)
    return _subst(e, v, FloorDiv(Sym(v), Const(n_lanes)))


def _as_flat(s: Compute, v: str, n_lanes: int, lane: int) -> Compute | None:
    """Lane ``lane`` of ``s`` over the flat axis (named ``v``): ``L * v + lane + b`` -> ``v + b``,
    any other ``v`` -> ``v // L``."""

    def index(e: SizeExpr) -> SizeExpr:
        return _lane_index(e, v, n_lanes, lane)

    def fn(x: Any) -> Any:
        if isinstance(x, (Read, Access)):
            return x.replace(index=tuple(index(i) for i in x.index))
        if isinstance(x, IndexValue):
            return x.replace(expr=index(x.expr))
        return x

    target = fn(s.target)
    expr = transform(s.expr, fn)
    guard = s.domain.guard
    if guard is not None:
        guard = transform(guard, fn)
    others = [a for a in s.domain.axes if a.name != v]
    if any(v in a.extent.free_syms() for a in others):
        return None
    return s.replace(target=target, expr=expr, domain=s.domain.replace(guard=guard))


def _lane_safe(m: Compute) -> bool:
    """No lane reads an element of the target that another lane writes."""
    parts = [m.expr] + ([m.domain.guard] if m.domain.guard is not None else [])
    return all(
        r.index == m.target.index for e in parts for r in reads(e) if r.tensor == m.target.tensor
    )


# ---------------------------------------------------------------------- lanes inside a reduction

_LANE_OPS = (Op.ADD, Op.MAX, Op.MIN)


def _merge_reduce_lanes(s: Any) -> Any:
    """Reductions whose body combines ``L`` lanes (``v[0] + v[1] + ... + v[L-1]`` of a vector
    loaded at ``L * j``) become one reduction over the flat axis ``u < L * extent(j)``."""
    if not isinstance(s, Compute):
        return s
    return transform(s, lambda x: _flat_reduce(_fuse_nested(x)) if isinstance(x, Reduce) else x)


def _fuse_nested(r: Reduce) -> Reduce:
    """Nested reductions with one op whose axes index one element as a mixed-radix number
    (a block's warps, their lanes and the stride loop of each thread:
    ``reduce(j < 4: reduce(k < 32: reduce(l < L: x[128 l + 32 j + k])))``) become one reduction
    over that number (``reduce(u < 128 L: x[u])``), the strides' order being the elements'."""
    if r.op not in _LANE_OPS:
        return r
    chain = [r]
    while isinstance(chain[-1].body, Reduce) and chain[-1].where is None:
        inner = chain[-1].body
        if inner.op != r.op or len(inner.axes) != 1:
            break
        chain.append(inner)
    if len(chain) < 2 or any(len(c.axes) != 1 for c in chain):
        return r
    axes = {c.axes[0].name: c.axes[0].extent for c in chain}
    body, where = chain[-1].body, chain[-1].where
    order = _radix_order(body, where, axes)
    if order is None:
        return r
    u = chain[-1].axes[0].name
    names = frozenset(axes)
    stride, last = order[-1]

    def index(ix: SizeExpr) -> SizeExpr:
        if not ix.free_syms() & names:
            return ix
        lin = linear(ix, names)
        assert lin is not None  # _radix_order checked every index
        rest = lin[None]
        return Sym(u) if rest == Const(0) else _plus(Sym(u), rest)

    def fn(x: Any) -> Any:
        if isinstance(x, Read):
            return x.replace(index=tuple(index(i) for i in x.index))
        if isinstance(x, IndexValue):
            return x.replace(expr=index(x.expr))
        return x

    axis = chain[-1].axes[0].replace(extent=_times(stride, axes[last]))
    fused = r.replace(
        axes=(axis,),
        body=transform(body, fn),
        where=transform(where, fn) if where is not None else None,
    )
    from cuda2nki.passes.guards_to_domains import _fold_reduce_bounds

    return _fold_reduce_bounds(fused)


def _radix_order(body: Any, where: Any, axes: dict) -> list[tuple[int, str]] | None:
    """The axes by stride when every index of ``body`` and ``where`` that moves with them moves
    as ``sum(stride_a * a)`` with the same constant strides, the smallest 1 and each next the
    previous times its extent (constant, save the largest's): [(stride, axis), ...]."""
    names = frozenset(axes)
    coeffs = None
    parts = [body] + ([where] if where is not None else [])
    for e in parts:
        for x in walk(e):
            if isinstance(x, (Reduce, Scan)) or (
                isinstance(x, Read) and any(isinstance(i, Dyn) for i in x.index)
            ):
                return None
            ixs = x.index if isinstance(x, Read) else (x.expr,) if isinstance(x, IndexValue) else ()
            for ix in ixs:
                if not ix.free_syms() & names:
                    continue
                lin = linear(ix, names)
                if lin is None:
                    return None
                got = {a: c for a, c in lin.items() if a is not None}
                if coeffs is None:
                    coeffs = got
                elif strip_locs(got) != strip_locs(coeffs):
                    return None
    if coeffs is None or set(coeffs) != set(names):
        return None
    if not all(isinstance(c, Const) and c.value > 0 for c in coeffs.values()):
        return None
    order = sorted((c.value, a) for a, c in coeffs.items())
    expect = 1
    for k, (stride, a) in enumerate(order):
        if stride != expect:
            return None
        if k < len(order) - 1:
            ext = axes[a]
            if not isinstance(ext, Const):
                return None
            expect = stride * ext.value
    return order


def _flat_reduce(r: Reduce) -> Reduce:
    if r.op not in _LANE_OPS:
        return r
    leaves = _leaves(r.body, r.op)
    n = len(leaves)
    if not 2 <= n <= _MAX_LANES:
        return r
    for pos, ax in enumerate(r.axes):
        v = ax.name
        offsets = [_read_offset(leaf, v, n) for leaf in leaves]
        if any(o is None for o in offsets):
            continue
        base = min(offsets)  # type: ignore[type-var]
        if sorted(o - base for o in offsets) != list(range(n)):  # type: ignore[operator]
            continue
        flat = [_flat_expr(leaf, v, n, o - base) for leaf, o in zip(leaves, offsets)]  # type: ignore[operator]
        if len({strip_locs(f) for f in flat}) != 1:
            continue
        axes = list(r.axes)
        axes[pos] = ax.replace(extent=_times(n, ax.extent))
        where = r.where
        if where is not None:
            where = transform(where, lambda x, v=v: _lane_free(x, v, n))
        return r.replace(axes=tuple(axes), body=flat[0], where=where)
    return r


def _leaves(e: Any, op: Op) -> list:
    if isinstance(e, Binary) and e.op == op:
        return _leaves(e.a, op) + _leaves(e.b, op)
    return [e]


def _read_offset(e: Any, v: str, n_lanes: int) -> int | None:
    """The lane ``c`` of the reads of ``e`` at ``L * v + c + b`` (all reads moving with ``v``
    agree on it); None where a read moves with ``v`` otherwise or ``e`` holds a reduction."""
    got: set[int] = set()
    for x in walk(e):
        if isinstance(x, (Reduce, Scan)):
            return None
        if not isinstance(x, Read):
            continue
        if any(isinstance(i, Dyn) for i in x.index):
            return None
        for ix in x.index:
            if v not in ix.free_syms():
                continue
            lin = linear(ix, frozenset({v}))
            if lin is None or lin.get(v) != Const(n_lanes):
                return None
            got.add(_split_const(lin[None])[1])
    return got.pop() if len(got) == 1 else None


def _flat_expr(e: Any, v: str, n_lanes: int, lane: int) -> Any:
    """Lane ``lane`` of ``e`` on the flat axis ``v``: ``L * v + lane + b`` -> ``v + b``."""

    def index(ix: SizeExpr) -> SizeExpr:
        return _lane_index(ix, v, n_lanes, lane)

    def fn(x: Any) -> Any:
        if isinstance(x, Read):
            return x.replace(index=tuple(index(i) for i in x.index))
        if isinstance(x, IndexValue):
            return x.replace(expr=index(x.expr))
        return x

    return transform(e, fn)


def _lane_free(x: Any, v: str, n_lanes: int) -> Any:
    """``v`` read as ``v // L`` (a mask shared by the lanes of one vector)."""
    if isinstance(x, IndexValue) and v in x.expr.free_syms():
        return x.replace(expr=_subst(x.expr, v, FloorDiv(Sym(v), Const(n_lanes))))
    return x


# ---------------------------------------------------------------------- tails


def _merge_tails(body: list) -> list:
    out: list = []
    for s in body:
        prev = out[-1] if out else None
        joined = _join(prev, s) if prev is not None else None
        if joined is not None:
            out[-1] = joined
        else:
            out.append(s)
    return out


def _join(a: Any, b: Any) -> Compute | None:
    """``a`` over ``u < A`` and ``b`` over its next ``B`` elements -> one statement over
    ``u < A + B`` (1-D domains, no guards)."""
    if not (_candidate(a) and _candidate(b)) or a.domain.guard or b.domain.guard:
        return None
    if len(a.domain.axes) != 1 or len(b.domain.axes) != 1:
        return None
    u, m = a.domain.axes[0], b.domain.axes[0]
    if u.kind != m.kind or b.target.tensor != a.target.tensor:
        return None
    shifted = _rename(b, {m.name: u.name})
    if shifted is None:
        return None
    # b at u = A + m is a at u: substitute m := u - A in b and compare
    back = transform(shifted, lambda x: _shift_index(x, u.name, u.extent))
    if back is None or strip_locs(back.target) != strip_locs(a.target):
        return None
    if strip_locs(back.expr) != strip_locs(a.expr) or not _lane_safe(a):
        return None
    axis = u.replace(extent=_sum_extent(u.extent, m.extent))
    return a.replace(domain=Domain((axis,)))


def _shift_index(x: Any, u: str, start: SizeExpr) -> Any:
    """In ``b`` (tail over ``u``), an index ``start + u + c`` reads as ``u + c``."""

    def fix(e: SizeExpr) -> SizeExpr:
        if u not in e.free_syms():
            return e
        lin = linear(e, frozenset({u}))
        if lin is None or lin.get(u) != Const(1):
            return _subst(e, u, Sub(Sym(u), start))
        rest, k = _split_const(lin[None])
        srest, sk = _split_const(start)
        if rest is not None and srest is not None and strip_locs(rest) == strip_locs(srest):
            return _plus(Sym(u), k - sk)
        if rest is None and srest is None:
            return _plus(Sym(u), k - sk)
        return _subst(e, u, Sub(Sym(u), start))

    if isinstance(x, (Read, Access)):
        return x.replace(index=tuple(fix(i) for i in x.index))
    if isinstance(x, IndexValue):
        return x.replace(expr=fix(x.expr))
    return x


def _sum_extent(a: SizeExpr, b: SizeExpr) -> SizeExpr:
    """``A + B``, with ``L * (n // L) + n % L`` read as ``n``."""
    if isinstance(b, Mod) and isinstance(b.b, Const):
        n, k = b.a, b.b
        if a in (Mul(k, FloorDiv(n, k)), Mul(FloorDiv(n, k), k)):
            return n
    return Add(a, b)


# ---------------------------------------------------------------------- helpers


def _split_const(e: SizeExpr) -> tuple[SizeExpr | None, int]:
    """``e`` as (symbolic part or None, integer constant): ``n * 4 + 3`` -> (``n * 4``, 3)."""
    if isinstance(e, Const):
        return None, int(e.value)
    if isinstance(e, Add):
        ra, ka = _split_const(e.a)
        rb, kb = _split_const(e.b)
        rest = rb if ra is None else ra if rb is None else Add(ra, rb)
        return rest, ka + kb
    if isinstance(e, Sub) and isinstance(e.b, Const):
        ra, ka = _split_const(e.a)
        return ra, ka - int(e.b.value)
    return e, 0


def _plus(e: SizeExpr, x: SizeExpr | int | None) -> SizeExpr:
    if x is None or x == 0:
        return e
    if isinstance(x, int):
        return Add(e, Const(x)) if x > 0 else Sub(e, Const(-x))
    return Add(e, x)


def _subst(e: SizeExpr, v: str, by: SizeExpr) -> SizeExpr:
    return transform(e, lambda x: by if isinstance(x, Sym) and x.name == v else x)


def _times(k: int, e: SizeExpr) -> SizeExpr:
    if isinstance(e, Const):
        return Const(k * e.value)
    return Mul(Const(k), e)
