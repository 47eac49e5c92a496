"""Candidates compared with their own extremum (argmax / argmin): when such a comparison can flip.

An index-valued reduction (:mod:`cuda2nki.lift.argfold`) compares every candidate value with the
extremum of the same candidates::

    M = min(FLT_MAX, reduce(min, l < C: d(l)))
    reduce(min, j < C: select(d(j) == M, index(j), BIG))

The general rule of the error bound lets ``d(j) == M`` flip wherever ``|d(j) - M| <= e_d + e_M``:
always at the extremum itself (``d(j*) == M`` exactly), so every such index would be unbounded.
But an implementation that compares its own candidate values with their own extremum finds the
extremum's position exactly unless another candidate lies within the error of it: with every
other candidate farther than ``e_d + e_M`` from the extremum, each computed value stays on its
side, the computed extremum is the computed ``d(j*)``, and ``d(j) == M`` holds at ``j*`` alone
in both implementations.  So the comparison can flip only where the gap between the extremum and
the runner-up candidate is within ``e_d + e_M`` -- a near tie, where either index may win.

* :func:`compared_extrema` -- the reductions some comparison treats so (their runner-up is kept).
* :func:`extremum_of` -- the ``min``/``max`` reduction a comparison operand is the extremum of
  (through ``min``/``max`` with literals: the loop's starting value).
* :func:`candidate_var` -- the variable ``v`` for which an expression is that reduction's body at
  ``v`` (the reduction's axis renamed, its locations ignored).
* :func:`top_two` / :func:`merge_top_two` / :func:`gap` -- the extremum and the runner-up over the
  reduced axes, mergeable across the chunks the evaluator reduces in.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cuda2nki.ir import nodes as n
from cuda2nki.ir.ops import Op
from cuda2nki.rewrite import nodes

_EXTREMA = (Op.MIN, Op.MAX)


def extremum_of(e: n.Expr) -> n.Reduce | None:
    """The one-axis ``min``/``max`` reduction ``e`` is the extremum of, possibly combined (by the
    same op) with literals; None otherwise."""
    op = None
    while isinstance(e, n.Binary) and e.op in _EXTREMA:
        if isinstance(e.a, n.Lit):
            e, op = e.b, op or e.op
        elif isinstance(e.b, n.Lit):
            e, op = e.a, op or e.op
        else:
            return None
    if not isinstance(e, n.Reduce) or e.op not in _EXTREMA or (op and e.op is not op):
        return None
    if len(e.axes) != 1 or e.where is not None:
        return None
    return e


def compared_extrema(kernel: n.Kernel) -> frozenset[int]:
    """Identities of the reductions some ``==`` / ``!=`` compares a candidate with (the only
    ones whose runner-up the bound needs)."""
    out = set()
    for x in nodes(kernel.body):
        if isinstance(x, n.Binary) and x.op in (Op.EQ, Op.NE):
            for side in (x.a, x.b):
                red = extremum_of(side)
                if red is not None:
                    out.add(id(red))
    return frozenset(out)


def candidate_var(x: n.Expr, red: n.Reduce) -> str | None:
    """``v`` such that ``x`` is ``red``'s body with its axis renamed ``v``, else None."""
    axis = red.axes[0].name
    found: dict[str, str] = {}
    if not _match(x, red.body, {}, axis, found):
        return None
    return found.get(axis)


def _match(x: Any, y: Any, ren: dict[str, str], axis: str, found: dict[str, str]) -> bool:
    """``x`` equals ``y`` with ``y``'s bound names renamed by ``ren`` and ``axis`` by whatever
    name ``x`` has in its place (recorded in ``found``), locations ignored."""
    if isinstance(y, tuple):
        return (
            isinstance(x, tuple)
            and len(x) == len(y)
            and all(_match(a, b, ren, axis, found) for a, b in zip(x, y))
        )
    if not dataclasses.is_dataclass(y) or isinstance(y, type):
        return x == y
    if type(x) is not type(y):
        return False
    if isinstance(y, n.Sym):
        if y.name == axis and y.name not in ren:
            return found.setdefault(axis, x.name) == x.name
        return ren.get(y.name, y.name) == x.name
    if isinstance(y, n.Reduce):
        if len(x.axes) != len(y.axes):
            return False
        ren = {**ren, **{b.name: a.name for a, b in zip(x.axes, y.axes)}}
    for f in dataclasses.fields(y):
        if f.name == "loc" or (isinstance(y, n.Axis) and f.name == "name"):
            continue
        if not _match(getattr(x, f.name), getattr(y, f.name), ren, axis, found):
            return False
    return True


def top_two(op: Op, x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The extremum and the runner-up of ``x`` over its first ``m`` axes (masked elements hold
    the op's identity), in float64, shaped like the reduction's result."""
    x = np.asarray(x, dtype=np.float64)
    rest = x.shape[m:]
    flat = x.reshape((-1, *rest)) if x.size else np.zeros((0, *rest))
    if op is Op.MAX:
        flat = -flat
    fill = np.full((2, *rest), np.inf)
    both = np.concatenate([flat, fill], axis=0)
    two = np.partition(both, 1, axis=0)[:2]
    if op is Op.MAX:
        two = -two
    return two[0], two[1]


def merge_top_two(op: Op, a: tuple, b: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The extremum and runner-up of two chunks' candidates together."""
    stack = np.stack(np.broadcast_arrays(a[0], a[1], b[0], b[1]))
    return top_two(op, stack, 1)


def gap(two: tuple) -> np.ndarray:
    """``|runner-up - extremum|``: infinite where there is one candidate."""
    with np.errstate(invalid="ignore"):
        d = np.abs(np.asarray(two[1]) - np.asarray(two[0]))
    return np.where(np.isinf(two[1]) & np.isfinite(two[0]), np.inf, d)


def with_literal(op: Op, m: np.ndarray, g: np.ndarray, lit: np.ndarray) -> np.ndarray:
    """The gap of ``op(lit, extremum)``: the literal joins the candidates."""
    m, lit = np.asarray(m, np.float64), np.asarray(lit, np.float64)
    with np.errstate(invalid="ignore"):
        d = np.abs(lit - m)
        better = lit < m if op is Op.MIN else lit > m
    return np.where(better, d, np.minimum(g, d))
