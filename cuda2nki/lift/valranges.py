"""Value ranges of integer inputs used as indices (``out[idx[i]]``, ``atomicAdd(&hist[bin], 1)``).

``check`` fills integer inputs with values in ``[0, 64)`` unless the binding gives a ``range``;
a tensor whose values index another array needs values inside that array's extent, else the
CUDA kernel itself reads or writes out of bounds on the generated inputs.  This module reads
the kernel: each load of an integer pointer parameter ``P`` that reaches the index of an array
``Q`` through casts, locals and constant shifts (``Q[P[i] - 1]``) bounds ``P``'s values by
``Q``'s extent.  An index that is reduced first (``% n``, ``& mask``, ``min``) needs no range.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_MAX_DEPTH = 8


@dataclass(frozen=True)
class IndexRange:
    """Values of ``tensor`` that index ``target``: ``[lo, hi)``, with the access's location."""

    tensor: str
    lo: int | str
    hi: int | str
    target: str
    loc: SourceLoc


def index_ranges(
    fn: A.Function, extents: Mapping[str, int | str], int_params: set[str]
) -> list[IndexRange]:
    """The ranges the kernel's indexing asks of each parameter in ``int_params``; ``extents``:
    the flat element count of each array an index may address (parameters and local arrays)."""
    locals_ = _local_values(fn)
    got: dict[str, IndexRange] = {}
    for node in walk(fn.body):
        if not isinstance(node, A.Index):
            continue
        target = _array_name(node.base)
        if target is None or target not in extents:
            continue
        for tensor, shift in _loads(node.index, locals_, int_params, 0, 0):
            if tensor == target:
                continue
            rng = _range(extents[target], shift)
            old = got.get(tensor)
            if old is None or _narrower(rng, (old.lo, old.hi)):
                got[tensor] = IndexRange(tensor, rng[0], rng[1], target, node.loc)
    return list(got.values())


def _array_name(base: A.Expr) -> str | None:
    while isinstance(base, A.Cast):
        base = base.operand
    return base.name if isinstance(base, A.Name) else None


def _local_values(fn: A.Function) -> dict[str, list[A.Expr]]:
    """Every value each local is initialised or assigned with (``=`` only)."""
    out: dict[str, list[A.Expr]] = {}
    for node in walk(fn.body):
        if isinstance(node, A.VarDecl) and node.init is not None:
            out.setdefault(node.name, []).append(node.init)
        elif isinstance(node, A.Assign) and isinstance(node.target, A.Name):
            if node.op == "=":
                out.setdefault(node.target.name, []).append(node.value)
            else:  # `bin += ...`: no longer the loaded value
                out.setdefault(node.target.name, []).append(node)
    return out


def _loads(
    e: A.Expr, locals_: Mapping[str, list[A.Expr]], params: set[str], shift: int, depth: int
) -> list[tuple[str, int]]:
    """(parameter, constant added) for each load of a parameter in ``params`` that is the
    index's value up to casts, locals and constant shifts."""
    if depth > _MAX_DEPTH:
        return []
    while isinstance(e, A.Cast) and isinstance(e.to, A.ScalarType):
        e = e.operand
    if isinstance(e, A.Index):
        name = _array_name(e.base)
        return [(name, shift)] if name in params else []
    if isinstance(e, A.Unary) and e.op == "*":  # `*(idx + i)`
        inner = e.operand
        if isinstance(inner, A.Binary) and inner.op == "+":
            for side in (inner.left, inner.right):
                name = _array_name(side)
                if name in params:
                    return [(name, shift)]
        return []
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        for var, const in ((e.left, e.right), (e.right, e.left)):
            if isinstance(const, A.IntLit) and (e.op == "+" or var is e.left):
                step = const.value if e.op == "+" else -const.value
                return _loads(var, locals_, params, shift + step, depth + 1)
        return []
    if isinstance(e, A.Name) and e.name in locals_:
        values = locals_[e.name]
        if len(values) != 1 or isinstance(values[0], A.Assign):
            return []  # reassigned: the value at the index is not one load
        return _loads(values[0], locals_, params, shift, depth + 1)
    return []


def _range(extent: int | str, shift: int) -> tuple[int | str, int | str]:
    """``Q[v + shift]`` in bounds: ``v`` in ``[-shift, extent - shift)`` (never below 0)."""
    lo = max(-shift, 0)
    if isinstance(extent, int):
        return lo, extent - shift
    return lo, f"({extent}) - {shift}" if shift else extent


def _narrower(new: tuple[int | str, int | str], old: tuple[int | str, int | str]) -> bool:
    if isinstance(new[1], int) and isinstance(old[1], int):
        return new[1] - new[0] < old[1] - old[0]  # type: ignore[operator]
    return isinstance(new[1], int) and not isinstance(old[1], int)


def local_extents(fn: A.Function) -> dict[str, int]:
    """Element counts of the kernel's fixed-size local and shared arrays."""
    out: dict[str, int] = {}
    for node in walk(fn.body):
        if isinstance(node, A.VarDecl) and isinstance(node.ty, A.ArrayType):
            dims = node.ty.dims
            if dims and all(isinstance(d, int) for d in dims):
                n = 1
                for d in dims:
                    n *= d  # type: ignore[operator]
                out[node.name] = n
    return out
