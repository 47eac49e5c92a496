"""A constant launch too large to simulate, scaled down with the tensors it covers.

A bandwidth test or a stream demo launches an unguarded element-wise kernel over a buffer of
fixed, production size: ``const int n = 4 * 1024 * 1024; k<<<n / 256, 256>>>(d_a, 0)`` with
``d_a`` allocated for ``n`` elements (or ``33 * n``: a stride test).  The kernel has no size
parameter, so the smaller test sizes that :func:`cuda2nki.lift.infer._shrink` picks have no
name to go to, and a check at the host's sizes runs past its time or memory limit.

Such a launch computes the same per-element function at any number of blocks.  Where the
kernel's work is that simple (one-dimensional grid, no loop, no guard bounding the thread
index, no block-level cooperation), the grid is halved until the largest tensor fits the
simulation size, and each tensor whose extent is a whole multiple of the grid shrinks with it,
so every thread still reads and writes inside its tensor.  A note gives the host's values.
"""

from __future__ import annotations

from typing import Any

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_LOOPS = (A.For, A.While, A.DoWhile)


def scale_constant_launch(
    params: dict[str, Any],
    launch: dict[str, Any] | None,
    fn: A.Function,
    guarded: bool,
    limit: int,
    kernel: str,
    diags: list[Diagnostic],
) -> None:
    """Halve ``launch``'s constant grid, and the tensors of ``params`` that are whole multiples
    of it, until no tensor holds more than ``limit`` elements (see the module docstring).
    ``guarded``: a guard bounds the kernel's thread index (then nothing is scaled)."""
    axis = _grid_axis(launch)
    if axis is None or guarded or not _simple(fn):
        return
    assert launch is not None
    grid = int(launch["grid"][axis])
    tensors = {n: s for n, s in params.items() if isinstance(s, dict) and "shape" in s}
    extents = {n: _extent(s["shape"]) for n, s in tensors.items()}
    if not extents or any(e is None for e in extents.values()):
        return
    big = {n for n, e in extents.items() if e is not None and e > limit}
    scaled = {n for n, e in extents.items() if e is not None and e % grid == 0}
    if not big or not big <= scaled:
        return
    factor = 1
    while grid % (2 * factor) == 0 and any((extents[n] or 0) // factor > limit for n in scaled):
        if any((extents[n] or 0) % (2 * factor) for n in scaled):
            break
        factor *= 2
    if factor == 1 or any((extents[n] or 0) // factor > limit for n in big):
        return
    was = {n: list(tensors[n]["shape"]) for n in scaled}
    for n in scaled:
        tensors[n]["shape"] = _scaled(tensors[n]["shape"], factor)
    launch["grid"] = list(launch["grid"])
    launch["grid"][axis] = grid // factor
    what = (
        f"launch grid {launch['grid']} and "
        + ", ".join(f"'{n}' shape {tensors[n]['shape']}" for n in sorted(scaled))
        + f" (the host's grid {grid} and "
        + ", ".join(f"{was[n]}" for n in sorted(scaled))
        + " are too large to simulate)"
    )
    why = "a smaller constant launch: every block does the same element-wise work"
    diags.append(make("C2N2100", fn.loc, what=what, kernel=kernel, source=why))


def _grid_axis(launch: dict[str, Any] | None) -> int | None:
    """The one axis of a constant grid with more than one block, if the launch is constant."""
    if launch is None:
        return None
    grid, block = launch.get("grid", ()), launch.get("block", ())
    if not all(isinstance(g, int) for g in (*grid, *block)):
        return None
    wide = [i for i, g in enumerate(grid) if g > 1]
    return wide[0] if len(wide) == 1 and wide[0] == 0 else None


def _simple(fn: A.Function) -> bool:
    """No loop, no shared memory, no barrier, no atomic, no y/z coordinate: every thread does
    one element's work on its own."""
    for n in walk(fn.body):
        if isinstance(n, _LOOPS):
            return False
        if isinstance(n, A.VarDecl) and n.storage in ("shared", "extern_shared"):
            return False
        if isinstance(n, A.Builtin) and n.dim in ("y", "z"):
            return False
        if isinstance(n, A.Call) and ("sync" in n.func or "atomic" in n.func):
            return False
    return True


def _extent(shape: Any) -> int | None:
    if not isinstance(shape, list | tuple) or not all(isinstance(d, int) for d in shape):
        return None
    total = 1
    for d in shape:
        total *= d
    return total


def _scaled(shape: list[int], factor: int) -> list[int]:
    """``shape`` with ``factor`` fewer elements, taken from the leading dims that divide."""
    out = list(shape)
    for i, d in enumerate(out):
        while factor > 1 and d % 2 == 0:
            d //= 2
            factor //= 2
        out[i] = d
        if factor == 1:
            break
    return out
