"""The launch geometry of an extent scan as polynomials: the block's constant sizes, the grid's
components (``ceil_div(X, b)`` read as whole tiles of ``X``), and a Python expression of the
binding read as a :class:`~cuda2nki.lift.affine.Poly` in the kernel's scalar parameters."""

from __future__ import annotations

import ast as pyast

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import DivAtom, Poly
from cuda2nki.lift.capped import capped_text


def _block(launch: dict | None) -> tuple | None:
    if launch is None:
        return None
    b = list(launch.get("block", ()))
    if not b or not all(isinstance(x, int) for x in b):
        return None
    return tuple(b) + (1,) * (3 - len(b))


def _grid(launch: dict | None, scalars: set[str]) -> tuple | None:
    """Per axis: (blocks as a Poly, the index range it covers when written ``ceil_div(X, b)``
    with ``b`` the block size, else None), or None for an axis that is not understood."""
    block = _block(launch)
    if launch is None:
        return None
    grid = list(launch.get("grid", ())) + [1] * (3 - len(launch.get("grid", ())))
    out = []
    for k, g in enumerate(grid[:3]):
        out.append(_grid_axis(str(g), scalars, block[k] if block else None))
    return tuple(out)


def _grid_axis(text: str, scalars: set[str], b: int | None) -> tuple | None:
    try:
        tree = pyast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    capped = _capped_count(tree, scalars)
    if capped is not None:
        return capped, None
    if (
        isinstance(tree, pyast.Call)
        and isinstance(tree.func, pyast.Name)
        and tree.func.id == "ceil_div"
        and len(tree.args) == 2
    ):
        x, d = (_py_poly(a, scalars) for a in tree.args)
        if x is None or d is None:
            return None
        q = af._exact_div(x, d)
        count = q if q is not None else Poly.atom(DivAtom(x, d))
        cover = x if b is not None and d == Poly.const(b) else None
        return count, cover
    p = _py_poly(tree, scalars)
    if p is None:
        return None
    tiles = _whole_tiles(p)
    if tiles is not None:  # (X + d - 1) / d blocks of a tiled kernel with no guard
        x, d = tiles
        cover = x if b is not None and d == Poly.const(b) else None
        return Poly.atom(DivAtom(x, d)), cover
    return p, None


def rounded_counts(launch: dict | None, scalars: set[str]) -> dict[DivAtom, Poly]:
    """Per grid axis the host rounds up (``ceil_div(X, d)``, ``(X + d - 1) / d``): the whole-tile
    count ``X / d`` the scan bounds ``blockIdx`` by, mapped to the count of blocks launched,
    ``ceil_div(X, d)`` (a size atom of its own, as the binding writes it).  An extent left
    holding ``X / d`` (``partial[blockIdx.x]``) is read at the launched count, so that it
    covers the last, partial block when ``X`` is ragged."""
    out: dict[DivAtom, Poly] = {}
    for g in (launch or {}).get("grid", ()):
        try:
            tree = pyast.parse(str(g).strip(), mode="eval").body
        except SyntaxError:
            continue
        pair = _rounded_up(tree, scalars)
        if pair is not None:
            x, d = pair
            out[DivAtom(x, d)] = Poly.atom(f"ceil_div({x}, {d})")
    return out


def _rounded_up(tree: pyast.expr, scalars: set[str]) -> tuple[Poly, Poly] | None:
    """``(X, d)`` of a grid axis written ``ceil_div(X, d)`` or ``(X + d - 1) / d`` with ``d`` a
    constant above 1 that does not divide ``X`` exactly."""
    if (
        isinstance(tree, pyast.Call)
        and isinstance(tree.func, pyast.Name)
        and tree.func.id == "ceil_div"
        and len(tree.args) == 2
    ):
        x, d = (_py_poly(a, scalars) for a in tree.args)
    else:
        p = _py_poly(tree, scalars)
        tiles = _whole_tiles(p) if p is not None else None
        if tiles is None:
            return None
        atom = p.terms[0][0][0]  # type: ignore[union-attr]
        if atom.num.const_value != atom.den.const_value - 1:
            return None  # `X / d` as written rounds down: the blocks launched are X / d
        x, d = tiles
    if x is None or d is None or not d.is_const or d.const_value <= 1:
        return None
    return None if af._exact_div(x, d) is not None else (x, d)


def _capped_count(tree: pyast.expr, scalars: set[str]) -> Poly | None:
    """``min(cap, X)`` blocks (either order, ``X`` often ``ceil_div(n, b)``, the cap a constant or
    a size) as one size atom (:mod:`cuda2nki.lift.capped`)."""
    text = capped_text(tree)
    if text is None:
        return None
    parts = [_py_poly(a, scalars) for a in tree.args]  # type: ignore[attr-defined]
    if any(p is None for p in parts):
        return None
    return parts[0] if parts[0] == parts[1] else Poly.atom(text)


def _whole_tiles(p: Poly) -> tuple[Poly, Poly] | None:
    """``(X + c) / d`` as ``(X, d)`` for a constant ``d`` > 1 and ``0 <= c < d``: rounded up
    (``c = d - 1``) or down (``X / d``, ``c = 0``), the grid covers exactly ``X`` threads when
    ``X`` is a multiple of ``d`` (as check chooses it)."""
    if len(p.terms) != 1 or p.terms[0][1] != 1 or len(p.terms[0][0]) != 1:
        return None
    a = p.terms[0][0][0]
    if not isinstance(a, DivAtom) or not a.den.is_const or a.den.const_value <= 1:
        return None
    c = a.num.const_value
    if not 0 <= c < a.den.const_value or a.num.is_const:
        return None
    return a.num - c, a.den


def _py_poly(n: pyast.expr, scalars: set[str]) -> Poly | None:
    if isinstance(n, pyast.Constant) and isinstance(n.value, int):
        return Poly.const(n.value)
    if isinstance(n, pyast.Name):
        return af.sym(n.id) if n.id in scalars else None
    if isinstance(n, pyast.UnaryOp) and isinstance(n.op, pyast.USub | pyast.UAdd):
        v = _py_poly(n.operand, scalars)
        return None if v is None else (-v if isinstance(n.op, pyast.USub) else v)
    if isinstance(n, pyast.BinOp):
        a, b = _py_poly(n.left, scalars), _py_poly(n.right, scalars)
        if a is None or b is None:
            return None
        if isinstance(n.op, pyast.Add):
            return a + b
        if isinstance(n.op, pyast.Sub):
            return a - b
        if isinstance(n.op, pyast.Mult):
            return a * b
        if isinstance(n.op, pyast.Div | pyast.FloorDiv):
            return af.floordiv(a, b)
    if isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name) and n.func.id == "ceil_div":
        a, b = (_py_poly(x, scalars) for x in n.args[:2])
        if a is None or b is None or len(n.args) != 2:
            return None
        return af.floordiv(a + b - 1, b)
    return None
