"""Queries on intent Computes used by several passes, and one generic bottom-up rewriter
(:func:`transform`).  Not a pass."""

from __future__ import annotations

from collections.abc import Iterator

from cuda2nki.ir.nodes import (
    Binary,
    Bitcast,
    Cast,
    Compute,
    Expr,
    IndexValue,
    Iterate,
    Kernel,
    Read,
    Reduce,
    Scan,
    Select,
    SizeExpr,
    Sym,
    Unary,
)
from cuda2nki.ir.ops import Op
from cuda2nki.rewrite import transform

__all__ = ["transform"]  # re-exported: the passes import it from here


def covers_target(c: Compute, kernel: Kernel) -> bool:
    """The statement writes every element of its target (provably, from the IR alone): no guard,
    and the target indexed by distinct domain axes whose extents are the tensor's shape."""
    decl = kernel.tensors.get(c.target.tensor)
    if decl is None or c.domain.guard is not None:
        return False
    names = [ix.name if isinstance(ix, Sym) else None for ix in c.target.index]
    if len(set(names)) != len(names):
        return False
    extents = {a.name: a.extent for a in c.domain.axes}
    return all(n in extents and extents[n] == dim for n, dim in zip(names, decl.shape))


def attrs(c: Compute) -> dict[str, str]:
    return dict(c.attrs)


def with_attrs(c: Compute, **new: str) -> Compute:
    merged = dict(c.attrs)
    merged.update(new)
    return c.replace(attrs=tuple(sorted(merged.items())))


def walk(e: Expr) -> Iterator[Expr]:
    yield e
    for child in children(e):
        yield from walk(child)


def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Unary | Cast | Bitcast):
        return (e.x,)
    if isinstance(e, Binary):
        return (e.a, e.b)
    if isinstance(e, Select):
        return (e.cond, e.a, e.b)
    if isinstance(e, Reduce):
        return (e.body,) if e.where is None else (e.body, e.where)
    if isinstance(e, Scan):
        return (e.body,)
    if isinstance(e, Iterate):
        return (*e.init, *e.update, e.cond) + (() if e.enter is None else (e.enter,))
    return ()


def reads(e: Expr) -> list[Read]:
    return [x for x in walk(e) if isinstance(x, Read)]


def reductions(e: Expr) -> list[Reduce]:
    return [x for x in walk(e) if isinstance(x, Reduce)]


def outermost(red: list[Reduce]) -> list[Reduce]:
    """The reductions of ``red`` not nested in another one of them (a grid-stride loop's trips
    inside a total over the grid's threads: a loop around each chunk)."""
    inner = {id(x) for r in red for x in walk(r.body) if isinstance(x, Reduce)}
    return [r for r in red if id(r) not in inner]


def sym_names(index: tuple[SizeExpr, ...]) -> tuple[str, ...] | None:
    """``(i, j)`` -> ``("i", "j")``; None when any index is not a bare symbol."""
    out = []
    for ix in index:
        if not isinstance(ix, Sym):
            return None
        out.append(ix.name)
    return tuple(out)


def contraction(e: Expr) -> Reduce | None:
    """The ``reduce(add, k: L * R)`` inside ``e`` whose operands both read the reduced axis."""
    for r in reductions(e):
        if r.op != Op.ADD or len(r.axes) != 1 or r.where is not None:
            continue
        body = r.body
        while isinstance(body, Cast):
            body = body.x
        if not (isinstance(body, Binary) and body.op == Op.MUL):
            continue
        k = r.axes[0].name
        ops = [strip_cast(body.a), strip_cast(body.b)]
        if all(isinstance(o, Read) and k in (sym_names(o.index) or ()) for o in ops):
            return r
    return None


def contractions(e: Expr) -> list[Reduce]:
    """Every ``reduce(add, k: L * R)`` inside ``e`` whose operands both read the reduced axis
    (a fused GEMM such as ``A B^T + B A^T`` has two)."""
    out = []
    for r in reductions(e):
        if contraction(r) is r:
            out.append(r)
    return out


def strip_cast(e: Expr) -> Expr:
    while isinstance(e, Cast):
        e = e.x
    return e


def moves_along(e: Expr) -> set[str]:
    """Axes the reads and index values of ``e`` move along."""
    out: set[str] = set()
    for x in walk(e):
        if isinstance(x, Read):
            for ix in x.index:
                out |= set(ix.free_syms())
        elif isinstance(x, IndexValue):
            out |= set(x.expr.free_syms())
    return out


def alpha_key(e: Expr, depth: int = 0) -> Expr:
    """``e`` with every reduction's bound axis renamed by its nesting depth, so two spellings of
    one reduction (``sum_j x[i, j]`` and ``sum_k x[i, k]``) compare equal (a cache key)."""
    if isinstance(e, Reduce):
        for k, ax in enumerate(e.axes):
            new = f"%bound{depth}.{k}"
            e = e.replace(
                axes=tuple(a.replace(name=new) if a is e.axes[k] else a for a in e.axes),
                body=_rename(e.body, ax.name, new),
                where=_rename(e.where, ax.name, new) if e.where is not None else None,
            )
        depth += 1
    return _rebuild(e, tuple(alpha_key(x, depth) for x in children(e)))


#: the name a tile's free axis takes in a cache key (no axis is spelled so)
FREE_AXIS = "%free"


def rename_axis(e: Expr, old: str, new: str) -> Expr:
    """Free occurrences of axis ``old`` in ``e`` renamed ``new``."""
    return _rename(e, old, new)


def _rename(e: Expr, old: str, new: str) -> Expr:
    """Free occurrences of axis ``old`` in ``e`` renamed ``new``."""
    if isinstance(e, Reduce) and any(a.name == old for a in e.axes):
        return e  # rebinds it
    if isinstance(e, Read | IndexValue):
        return transform(e, lambda n: Sym(new) if isinstance(n, Sym) and n.name == old else n)
    return _rebuild(e, tuple(_rename(x, old, new) for x in children(e)))


def _rebuild(e: Expr, kids: tuple) -> Expr:
    if not kids or all(a is b for a, b in zip(kids, children(e))):
        return e
    if isinstance(e, Unary | Cast | Bitcast):
        return e.replace(x=kids[0])
    if isinstance(e, Binary):
        return e.replace(a=kids[0], b=kids[1])
    if isinstance(e, Select):
        return e.replace(cond=kids[0], a=kids[1], b=kids[2])
    if isinstance(e, Reduce):
        return e.replace(body=kids[0], where=kids[1] if len(kids) > 1 else None)
    if isinstance(e, Iterate):
        k = len(e.names)
        enter = kids[2 * k + 1] if e.enter is not None else None
        return e.replace(init=kids[:k], update=kids[k : 2 * k], cond=kids[2 * k], enter=enter)
    return e.replace(body=kids[0])  # Scan


def index_only(e: Expr) -> bool:
    """``e`` is a condition on index values alone (no data read): a mask an iota can build."""
    return not reads(e) and any(isinstance(x, IndexValue) for x in walk(e))
