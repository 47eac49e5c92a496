"""Size steps: which sizes a kernel is only ever run at multiples of, read from its launch.

A host that sizes its grid by rounding *down* (``dim3 grid(cols / 16, rows / 16)`` with 16x16
blocks) runs the kernel on whole blocks only: a size that is not a multiple of 16 leaves its tail
unprocessed, and a kernel written for such a host has no guard (its stencil reads past the end at
a ragged size).  The same holds for a grid rounded *up* (``ceil_div(n, 256)``) over a kernel with
no guard on that axis, when the host's own size is a multiple of the block.  Either way the
relation "``cols`` is a multiple of 16" is part of the kernel's contract, and check must choose
its test points accordingly (``[check.multiples]`` of the binding).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cuda2nki.binding import ExprError, Number, eval_c_expr


@dataclass(frozen=True)
class Step:
    """``name`` is only ever a multiple of ``step`` (``why``: the evidence, in words)."""

    name: str
    step: int
    why: str


def size_steps(
    grid: Iterable[str | int],
    block: tuple[int, ...] | None,
    sizes: set[str],
    unguarded: set[int],
    host: Mapping[str, Number],
    tiled: set[int] | frozenset[int] = frozenset(),
) -> list[Step]:
    """The steps a launch implies: per grid axis, a size rounded down to whole blocks, or rounded
    up over an axis no guard bounds (``unguarded``: of one-thread-per-element blocks; ``tiled``:
    the index expressions reach past a block tile of the divisor's size, whatever its thread
    count) while the host's value of it (``host``), if known, is a whole number of blocks.  A
    name given two steps keeps the larger (its multiple)."""
    found: dict[str, Step] = {}
    for axis, g in enumerate(grid):
        if not isinstance(g, str):
            continue
        got = _division(g, sizes)
        if got is None:
            continue
        name, step, rounds_up = got
        if step < 2:
            continue
        if rounds_up:
            value = host.get(name)
            if not _whole_blocks(axis, step, block, unguarded, tiled) or (
                value is not None and int(value) % step
            ):
                continue
            why = (
                f"no guard bounds the threads of grid axis {axis} ({g}): the kernel covers "
                f"{name} in whole {step}-element blocks"
            )
            if value is not None:
                why += f", as the host's {name} = {int(value)} is"
        else:
            why = f"the grid rounds {name} down to whole blocks ({g})"
        old = found.get(name)
        if old is None or step % old.step == 0:
            found[name] = Step(name, step, why)
    return list(found.values())


def unguarded_tiles(extents: Mapping[str, object]) -> set[int]:
    """Grid axes some pointer's extent (:mod:`cuda2nki.lift.extents`) bounds only by the launch
    geometry: the kernel's blocks reach a whole tile there with no guard."""
    return {a for ext in extents.values() for a in getattr(ext, "unguarded", ())}


def _whole_blocks(
    axis: int,
    step: int,
    block: tuple[int, ...] | None,
    unguarded: set[int],
    tiled: set[int] | frozenset[int],
) -> bool:
    """Whether the blocks of grid axis ``axis`` (rounded up by ``step``) each cover ``step``
    elements with no guard: a tile the index expressions reach past, or one thread each."""
    if axis in tiled:
        return True
    return axis in unguarded and block is not None and axis < len(block) and block[axis] == step


def _division(text: str, sizes: set[str]) -> tuple[str, int, bool] | None:
    """``(name, d, rounds_up)`` when ``text`` is ``name / d`` (rounds down), ``(name + d - 1) /
    d`` or ``ceil_div(name, d)`` (rounds up), with ``d`` a constant; else None."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    while isinstance(node, ast.Call) and _called(node) == "int" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Call) and _called(node) == "ceil_div" and len(node.args) == 2:
        num, den, up = node.args[0], node.args[1], True
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.FloorDiv):
        num, den, up = node.left, node.right, False
    else:
        return None
    d = _const(den)
    if d is None:
        return None
    if isinstance(num, ast.Name) and num.id in sizes:
        return num.id, d, up
    if up:
        return None
    got = _plus_const(num, sizes)
    if got is not None and got[1] == d - 1:
        return got[0], d, True
    return None


def _plus_const(node: ast.AST, sizes: set[str]) -> tuple[str, int] | None:
    """``(name, c)`` when ``node`` is one size plus a constant, however it is spelled
    (``n + 127``, ``((n) + (128) - 1)``, ``n - 1 + 128``); else None."""
    names = {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}
    if len(names) != 1 or not names <= sizes:
        return None
    (name,) = names
    text = ast.unparse(node)
    try:
        at = [eval_c_expr(text, {name: v}) for v in (0, 1, 1000)]
    except (ExprError, ValueError, TypeError, ZeroDivisionError, SyntaxError):
        return None
    if not all(isinstance(v, int) for v in at) or at[1] - at[0] != 1 or at[2] - at[0] != 1000:
        return None
    return name, int(at[0])


def _called(node: ast.Call) -> str | None:
    return node.func.id if isinstance(node.func, ast.Name) else None


def _const(node: ast.AST) -> int | None:
    try:
        v = eval_c_expr(ast.unparse(node), {})
    except (ExprError, ValueError, TypeError, ZeroDivisionError, SyntaxError):
        return None
    return int(v) if isinstance(v, int) or (isinstance(v, float) and v.is_integer()) else None
