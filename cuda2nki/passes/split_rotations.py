"""``split-rotations``: a read at ``(i + c) mod n`` over ``i < n`` becomes two shifted slices.

A circular shift (``np.roll``) reads ``x[(i - shift) % n]``: an index computed per element, which
a tile cannot load.  Over the whole axis ``i < n`` it is a rotation: with ``r = c mod n``, the
elements ``i < n - r`` read ``x[i + r]`` and the last ``r`` read ``x[i + r - n]`` -- two
contiguous pieces, each one ordinary shifted load.

Before::  out[i] = in[(i - shift) % n] for i < n
After::   out[i] = in[i + (-shift) % n] for i < n - (-shift) % n
          out[n - (-shift) % n + k] = in[k] for k < (-shift) % n

The IR's ``%`` is floor modulo (in ``[0, n)`` for ``n > 0``), so the hand-written wrap CUDA
needs for its truncating ``%`` -- ``j < 0 ? j + n : j`` or ``((i - s) % n + n) % n`` -- is
already the identity here and is folded away first.  Applies when the divisor is the axis's own
extent and ``c`` does not depend on any axis of the statement; every other use of ``i`` in the
statement (its target, other reads) is rewritten with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import (
    Add,
    Axis,
    Binary,
    Compute,
    Const,
    Dyn,
    IndexValue,
    Kernel,
    Mod,
    Select,
    SizeExpr,
    Sym,
)
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import transform
from cuda2nki.passes._index import linear
from cuda2nki.passes.base import Pass, PassContext


@dataclass(frozen=True)
class SplitRotationsPass(Pass):
    name: ClassVar[str] = "split-rotations"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        body: list = []
        for s in kernel.body:
            body.extend(_split(s) if isinstance(s, Compute) else (s,))
        return kernel.replace(body=tuple(body))


@dataclass(frozen=True)
class Rotation:
    axis: str
    extent: SizeExpr
    shift: SizeExpr  # r = c mod n, in [0, n)


def _split(c: Compute) -> tuple[Compute, ...]:
    extents = frozenset(a.extent for a in c.domain.axes)
    plain = transform(c, lambda x: _plain_index(x, extents))
    rot = _rotation(plain)
    if rot is None:
        return (c,)
    used = _names(plain)
    k = _fresh(rot.axis, used)
    head = _piece(plain, rot, rot.axis, rot.extent - rot.shift, Sym(rot.axis), rot.shift)
    tail_i = rot.extent - rot.shift + Sym(k)
    tail = _piece(plain, rot, k, rot.shift, tail_i, Const(0))
    return head, tail


def _piece(
    c: Compute, rot: Rotation, var: str, extent: SizeExpr, i_is: SizeExpr, offset: SizeExpr
) -> Compute:
    """``c`` over ``var < extent`` where ``i = i_is`` and the rotated index is ``var + offset``."""
    rotated = Sym(var) + offset if offset != Const(0) else Sym(var)

    def sub(x: Any) -> Any:
        if isinstance(x, Mod) and _rotated_by(x, rot) is not None:
            return rotated
        return x

    def rename(x: Any) -> Any:
        return i_is if isinstance(x, Sym) and x.name == rot.axis else x

    target = transform(transform(c.target, sub), rename)
    expr = transform(transform(c.expr, sub), rename)
    axes = tuple(
        Axis(var, extent, a.kind, a.loc) if a.name == rot.axis else a for a in c.domain.axes
    )
    return c.replace(target=target, expr=expr, domain=c.domain.replace(axes=axes))


def _rotation(c: Compute) -> Rotation | None:
    """The one rotation all modulo indices of ``c`` share (None: none, or not a rotation)."""
    if c.accumulate is not None or c.domain.guard is not None:
        return None
    extents = {a.name: a.extent for a in c.domain.axes}
    found: set[Rotation] = set()
    bad = False

    def visit(x: Any) -> Any:
        nonlocal bad
        if isinstance(x, Mod):
            for name, ext in extents.items():
                r = _rotated_by(x, Rotation(name, ext, Const(0)))
                if r is not None:
                    found.add(Rotation(name, ext, r))
                    return x
            if x.free_syms() & set(extents):
                bad = True
        elif isinstance(x, Dyn):
            bad = True
        return x

    transform(c, visit, skip=(Axis,))
    if bad or len(found) != 1:
        return None
    return found.pop()


def _rotated_by(m: Mod, rot: Rotation) -> SizeExpr | None:
    """``r = c mod n`` when ``m`` is ``(axis + c) mod n`` with ``n`` the axis's extent."""
    if m.b != rot.extent:
        return None
    lin = linear(m.a, frozenset({rot.axis}))
    if lin is None or set(lin) != {rot.axis, None} or lin[rot.axis] != Const(1):
        return None
    const = lin[None]
    if const.free_syms() & {rot.axis}:
        return None
    return Mod(const, rot.extent)


def _plain_index(x: Any, extents: frozenset[SizeExpr]) -> Any:
    """Dyn indices that are plain integer arithmetic, as sizes; redundant wraps of a modulo by
    an axis extent (positive whenever the statement runs) folded."""
    if isinstance(x, Dyn):
        e = _int_expr(x.expr, extents)
        return x if e is None else e
    if isinstance(x, Mod) and x.b in extents:
        inner = x.a
        if isinstance(inner, Add):  # (m mod n + n) mod n
            for a, b in ((inner.a, inner.b), (inner.b, inner.a)):
                if isinstance(a, Mod) and a.b == x.b and b == x.b:
                    return a
        if isinstance(inner, Mod) and inner.b == x.b:
            return inner
    return x


def _int_expr(e: Any, extents: frozenset[SizeExpr]) -> SizeExpr | None:
    if isinstance(e, IndexValue):
        return e.expr
    if isinstance(e, Select):
        cond = _sign_test(e.cond, extents)
        if cond is None:
            return None
        return _int_expr(e.a if cond else e.b, extents)
    return None


def _sign_test(e: Any, extents: frozenset[SizeExpr]) -> bool | None:
    """The value of ``m < 0`` (False) or ``m >= 0`` (True) for a floor modulo ``m`` by an axis
    extent (positive whenever the statement runs)."""
    if not (isinstance(e, Binary) and isinstance(e.a, IndexValue) and isinstance(e.b, IndexValue)):
        return None
    m = e.a.expr
    if not isinstance(m, Mod) or m.b not in extents or e.b.expr != Const(0):
        return None
    return {Op.LT: False, Op.GE: True}.get(e.op)


def _names(node: Any) -> set[str]:
    found: set[str] = set()

    def visit(x: Any) -> Any:
        if isinstance(x, Sym):
            found.add(x.name)
        elif isinstance(x, Axis):
            found.add(x.name)
        return x

    transform(node, visit)
    return found


def _fresh(base: str, used: set[str]) -> str:
    for k in range(1, 1000):
        name = f"{base}{k}"
        if name not in used:
            return name
    raise AssertionError("no fresh axis name")
