"""Affine index analysis for the lowering passes (not a pass).

An index dimension is usable by the tiled layouts when it is ``k * axis + c`` with a positive
integer ``k`` and a ``c`` free of domain axes (shifted and strided accesses: stencils, even/odd
lanes), or free of axes altogether (a fixed element, broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.ir.nodes import Add, At, Const, Dyn, Mul, SizeExpr, Slice, Sub, Sym

FULL, ROW, BCAST, SCALAR = "full", "row", "bcast", "scalar"


@dataclass(frozen=True)
class Affine1:
    axis: str | None  # None: the dim does not move with the domain
    k: int
    c: SizeExpr


def affine1(e: SizeExpr, axes: frozenset[str]) -> Affine1 | None:
    if isinstance(e, Dyn):
        return None  # data-dependent: a gather, not an affine access
    if isinstance(e, Sym):
        return Affine1(e.name, 1, Const(0)) if e.name in axes else Affine1(None, 0, e)
    if isinstance(e, Const):
        return Affine1(None, 0, e)
    if isinstance(e, Add | Sub):
        a, b = affine1(e.a, axes), affine1(e.b, axes)
        if a is None or b is None:
            return None
        if isinstance(e, Sub):
            if b.axis is not None:
                return None
            return Affine1(a.axis, a.k, _fold(a.c - b.c))
        if a.axis is not None and b.axis is not None:
            return None
        axis = a.axis or b.axis
        k = a.k if a.axis is not None else b.k
        return Affine1(axis, k, _fold(a.c + b.c))
    if isinstance(e, Mul):
        for x, y in ((e.a, e.b), (e.b, e.a)):
            if isinstance(x, Const):
                inner = affine1(y, axes)
                if inner is None:
                    return None
                if inner.axis is not None and x.value <= 0:
                    return None
                return Affine1(inner.axis, inner.k * x.value, _fold(x * inner.c))
    if e.free_syms() & axes or _has_dyn(e):
        return None
    return Affine1(None, 0, e)


def _has_dyn(e: SizeExpr) -> bool:
    if isinstance(e, Dyn):
        return True
    return any(
        _has_dyn(getattr(e, f)) for f in ("a", "b") if isinstance(getattr(e, f, None), SizeExpr)
    )


_OPS = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "Mod": "%"}


def fmt(e: SizeExpr) -> str:
    """Short human spelling of an index for messages."""
    if isinstance(e, Sym):
        return e.name
    if isinstance(e, Const):
        return str(e.value)
    name = type(e).__name__
    if name in _OPS:
        return f"({fmt(e.a)} {_OPS[name]} {fmt(e.b)})"
    if name in ("Min", "Max", "CeilDiv"):
        return f"{name.lower()}({fmt(e.a)}, {fmt(e.b)})"
    return "<data-dependent>"


def _fold(e: SizeExpr) -> SizeExpr:
    """Drop ``+ 0`` / ``- 0`` / ``0 +`` so spelled indices stay short."""
    if isinstance(e, Add | Sub) and isinstance(e.b, Const) and e.b.value == 0:
        return e.a
    if isinstance(e, Add) and isinstance(e.a, Const) and e.a.value == 0:
        return e.b
    if isinstance(e, Mul) and (e.a == Const(0) or e.b == Const(0)):
        return Const(0)
    if isinstance(e, Mul) and e.a == Const(1):
        return e.b
    return e


FLATROW = "flatrow"


@dataclass(frozen=True)
class FlatRow:
    """One index ``K * p + f + c`` on a 1-D tensor: rows of ``K`` contiguous elements."""

    k: SizeExpr
    c: SizeExpr


def linear(e: SizeExpr, axes: frozenset[str]) -> dict[str | None, SizeExpr] | None:
    """``e`` as ``sum(coef[a] * a) + coef[None]`` with axis-free coefficients (None if not linear)."""
    if isinstance(e, Dyn):
        return None
    if isinstance(e, Sym) and e.name in axes:
        return {e.name: Const(1), None: Const(0)}
    if not (e.free_syms() & axes) and not _has_dyn(e):
        return {None: e}
    if isinstance(e, Add | Sub):
        a, b = linear(e.a, axes), linear(e.b, axes)
        if a is None or b is None:
            return None
        out = dict(a)
        for key, v in b.items():
            base = out.get(key, Const(0))
            out[key] = _fold(base + v) if isinstance(e, Add) else _fold(base - v)
        return out
    if isinstance(e, Mul):
        for x, y in ((e.a, e.b), (e.b, e.a)):
            if not (x.free_syms() & axes) and not _has_dyn(x):
                inner = linear(y, axes)
                if inner is None:
                    return None
                return {key: (x if v == Const(1) else _fold(x * v)) for key, v in inner.items()}
    return None


def flat_row(ix: SizeExpr, p: str, f: str) -> FlatRow | None:
    if not (p and f):
        return None
    lin = linear(ix, frozenset((p, f)))
    if lin is None or lin.get(f) != Const(1) or p not in lin:
        return None
    return FlatRow(lin[p], lin.get(None, Const(0)))


def access_class(index: tuple[SizeExpr, ...], p: str, f: str) -> tuple[str, tuple] | None:
    """FULL (moves with p and f), ROW (p only), BCAST (f only), SCALAR, or FLATROW (one index
    ``K*p + f + c`` on a 1-D tensor); None if not affine."""
    if len(index) == 1:
        fr = flat_row(index[0], p, f)
        if fr is not None:
            return FLATROW, (fr,)
    axes = frozenset(a for a in (p, f) if a)
    dims = []
    for ix in index:
        a = affine1(ix, axes)
        if a is None:
            return None
        dims.append(a)
    order = tuple(d.axis for d in dims if d.axis is not None)
    cls = (
        {(p, f): FULL, (p,): ROW, (f,): BCAST, (): SCALAR}.get(order)
        if f
        else {
            (p,): ROW,
            (): SCALAR,
        }.get(order)
    )
    if cls is None:
        return None
    return cls, tuple(dims)


def dims_for(
    dims: tuple[Affine1, ...],
    p: str,
    f: str,
    r0: SizeExpr,
    rows: SizeExpr,
    c0: SizeExpr,
    cols: SizeExpr,
) -> tuple:
    """View dims of an access on one ``rows x cols`` tile starting at (r0, c0)."""
    out = []
    for d in dims:
        if d.axis is None:
            out.append(At(d.c))
        elif d.axis == p:
            out.append(Slice(_fold(_scaled(d.k, r0) + d.c), rows, d.k))
        else:
            out.append(Slice(_fold(_scaled(d.k, c0) + d.c), cols, d.k))
    return tuple(out)


def _scaled(k: int, x: SizeExpr) -> SizeExpr:
    if k == 1:
        return x
    if isinstance(x, Const):
        return Const(k * x.value)
    return Const(k) * x


def flat_ok(dims: tuple[Affine1, ...]) -> bool:
    """A 1-D-domain access that can ride on the flat ``[128, F]`` chunking: exactly one dim moves,
    with unit stride, and it is the tensor's last dim (so consecutive points are contiguous)."""
    moving = [n for n, d in enumerate(dims) if d.axis is not None]
    return len(moving) == 1 and moving[0] == len(dims) - 1 and dims[moving[0]].k == 1


def flat_record_ok(dims: tuple[Affine1, ...]) -> bool:
    """A 1-D-domain access that rides on the ``[128, F]`` chunking as a strided field of records:
    exactly one dim moves, with a positive stride, and every other dim is a fixed index
    (``p[i, 0]`` of a ``[N, 2]`` array of pairs, ``q[3 * i + 1]`` of a flattened one); the
    chunk's DMA then moves every record's field with the record's stride."""
    moving = [d for d in dims if d.axis is not None]
    return len(moving) == 1 and moving[0].k >= 1


def plus(a: SizeExpr, b: SizeExpr) -> SizeExpr:
    return _fold(a + b)


def flat_guard(where, p: str, f: str) -> tuple[FlatRow, SizeExpr] | None:
    """``index(K*p + f + c) < n`` (the ragged last block of a per-block reduction)."""
    from cuda2nki.ir.nodes import Binary, IndexValue, Lit, Param
    from cuda2nki.ir.ops import Op

    if not (isinstance(where, Binary) and where.op == Op.LT and isinstance(where.a, IndexValue)):
        return None
    fr = flat_row(where.a.expr, p, f)
    b = where.b
    if isinstance(b, IndexValue):
        bound = b.expr
    elif isinstance(b, Param):
        bound = Sym(b.name)
    elif isinstance(b, Lit) and isinstance(b.value, int):
        bound = Const(b.value)
    else:
        return None
    if fr is None or bound.free_syms() & {p, f}:
        return None
    return fr, bound
