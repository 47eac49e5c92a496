"""Size steps read from a kernel's loops: ``for (t = 0; t < n / TILE; t++)`` walks whole tiles
of ``n`` and drops a ragged tail, so the kernel is written for sizes that are multiples of
``TILE``.  When the host's own value of ``n`` is such a multiple, that relation is part of the
kernel's contract (a tiled matmul at ``n = 129`` computes a different product than CUDA does at
that size only because the kernel never meant to run there), and check keeps its sizes so.

The same holds for a loop stepping over ``n`` a tile at a time, ``for (k = 0; k < n; k += BK)``,
whose body reads ``k + c`` (``c < BK``) with no guard: the offsets stay inside the buffer only
when ``n`` is a multiple of ``BK`` (:func:`tile_steps`, from the extents of
:mod:`cuda2nki.lift.extents`)."""

from __future__ import annotations

from collections.abc import Mapping

from cuda2nki.binding import Number
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.steps import Step


def loop_steps(fn: A.Function, sizes: set[str], host: Mapping[str, Number]) -> list[Step]:
    """A step for each size ``n`` some loop bounds by ``n / C`` (C >= 2, a constant) while the
    host's value of ``n`` is a multiple of C; a size with several keeps the largest."""
    found: dict[str, Step] = {}
    for node in walk(fn.body):
        if not isinstance(node, A.For) or node.cond is None:
            continue
        got = _tiles_of(node.cond)
        if got is None:
            continue
        name, step = got
        value = host.get(name)
        if name not in sizes or value is None or step < 2 or int(value) % step:
            continue
        why = (
            f"a loop runs over {name} / {step} whole tiles (line {node.loc.line}) and the "
            f"host's {name} = {int(value)} is a multiple of {step}"
        )
        if name not in found or found[name].step < step:
            found[name] = Step(name, step, why)
    return list(found.values())


def _tiles_of(cond: A.Expr) -> tuple[str, int] | None:
    """``i < n / C`` (or ``n / C > i``): (n, C)."""
    if not isinstance(cond, A.Binary):
        return None
    if cond.op in ("<", "<="):
        bound = cond.right
    elif cond.op in (">", ">="):
        bound = cond.left
    else:
        return None
    while isinstance(bound, A.Cast):
        bound = bound.operand
    if not (isinstance(bound, A.Binary) and bound.op == "/"):
        return None
    n, c = bound.left, bound.right
    while isinstance(n, A.Cast):
        n = n.operand
    if isinstance(n, A.Name) and isinstance(c, A.IntLit):
        return n.name, c.value
    return None


def tile_steps(
    extents: Mapping[str, object], sizes: set[str], host: Mapping[str, Number]
) -> list[Step]:
    """A step for each size an unguarded tile loop assumes a multiple of its step (the
    ``tiles`` of the pointer extents), unless the host's own value of it is not one."""
    found: dict[str, Step] = {}
    for ext in extents.values():
        for name, step, loop in getattr(ext, "tiles", ()):
            value = host.get(name)
            if name not in sizes or step < 2 or (value is not None and int(value) % step):
                continue
            why = (
                f"loop '{loop}' steps over {name} by {step} and reads a whole tile each trip "
                f"with no guard"
            )
            if name not in found or found[name].step < step:
                found[name] = Step(name, step, why)
    return list(found.values())
