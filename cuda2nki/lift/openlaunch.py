"""A launch whose grid (or block) the host computes from run-time values.

Real host code often sizes a launch from values read at run time: ``atoi(argv[1])``, a file's
header, a device property, a member of a simulation object, an output parameter of a helper
(``computeGridSize(n, 256, &blocks, &threads)``).  The launch site is there, but its grid has no
value the source shows.  Such a grid is a *size*: it counts the threads the work needs, and
sizes never need values (check chooses its own).  So instead of refusing the binding:

* a **grid axis** the host does not show covers the guard every store shares on that axis
  (``if (i < n)`` with ``i`` the global thread index: ``ceil_div(n, block)`` blocks, which
  follows the sizes check picks); an axis no guard bounds (a grid-stride loop, an unguarded
  kernel whose shapes follow the grid) gets a fixed number of blocks;
* a **block** the host does not show is the default block of
  :mod:`cuda2nki.lift.defaultlaunch` (``__launch_bounds__``, else 128 threads), but only for a
  kernel whose work does not depend on the block's shape; otherwise the launch stays missing;
* the number of grid axes is the launch's, or, for a grid the source shows nothing of (one
  ``dim3`` whose components are all run-time), the axes the kernel reads (``blockIdx.y``);
* a grid that the host's values make 0 (``n / (128 * workers)`` with a default taken for
  ``workers``) is no launch the program makes: it is open too.

Each choice is said in a note naming the launch (file:line) and the run-time value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.defaultlaunch import THREADS, default_block

_AXES = "xyz"
#: the key of a launch dict that lists its grid axes still to be chosen (removed once chosen)
OPEN = "open_axes"
#: threads per fixed grid axis beyond x (an axis no guard bounds)
_OTHER_THREADS = 32


@dataclass(frozen=True)
class OpenLaunch:
    """A launch with run-time grid axes: ``grid`` has a placeholder on each of ``open_axes``."""

    grid: list[str | int]
    block: list[int]
    open_axes: tuple[int, ...]
    source: str


def open_launch(fn: A.Function, site: A.LaunchSite, grid: list, block: list) -> OpenLaunch | None:
    """The launch of ``fn`` at ``site`` from the host's grid and block (per axis: its text in
    parameter names, or None where the host computes it at run time); None when the block is
    run-time and the kernel's work depends on it, or nothing is open."""
    blk = _block(fn, block)
    if blk is None:
        return None
    # a grid the source shows nothing of (one unknown `dim3`) has the axes the kernel reads;
    # a component the host gives leaves the axes after it at 1
    axes = max(len(grid), _grid_axes_used(fn)) if all(g is None for g in grid) else len(grid)
    full = list(grid) + [None] * (axes - len(grid))
    open_axes = tuple(i for i, g in enumerate(full) if g is None)
    if not open_axes and blk == block:
        return None
    where = f"{site.loc.file}:{site.loc.line}"
    parts = []
    if open_axes:
        names = ", ".join(_AXES[i] for i in open_axes)
        parts.append(f"grid axis {names} of '<<<{site.grid_text}, ...>>>' is a run-time value")
    if blk != block:
        parts.append(
            f"block '{site.block_text}' is a run-time value and the kernel's work does not "
            f"depend on the block's shape: {blk[0]} threads taken"
        )
    source = f"the launch at {where} ({'; '.join(parts)})"
    placeholder = [g if g is not None else 0 for g in full]  # 0: no number to keep
    return OpenLaunch(placeholder, blk, open_axes, source)


def _block(fn: A.Function, block: list) -> list[int] | None:
    """The block: the host's where every component is a number, else the default block of a
    kernel whose work does not depend on it."""
    if block and all(isinstance(b, int) and b > 0 for b in block):
        return list(block)
    default = default_block(fn)
    return [default] if default is not None else None


def _grid_axes_used(fn: A.Function) -> int:
    """1 + the highest grid axis the kernel reads (``blockIdx.z`` -> 3)."""
    used = 1
    for n in walk(fn.body):
        if isinstance(n, A.Builtin) and n.name in ("blockIdx", "gridDim") and n.dim in _AXES:
            used = max(used, _AXES.index(n.dim) + 1)
    return used


def close_grid(
    launch: dict, bounds: dict[int, str], fn: A.Function, site: A.LaunchSite, diags: list
) -> None:
    """Choose ``launch``'s open grid axes (its :data:`OPEN` key, removed): ``bounds`` gives the
    guard bound per axis in the kernel's size parameters; a note says the launch chosen."""
    axes = launch.pop(OPEN, ())
    grid = list(launch["grid"])
    block = list(launch["block"]) + [1, 1]
    for axis in axes:
        kept = grid[axis] if isinstance(grid[axis], int) and grid[axis] > 0 else None
        grid[axis] = covering(bounds.get(axis), int(block[axis]), axis, kept)
    launch["grid"] = grid
    diags.append(_note(fn, site, launch, launch.pop("open_source", "")))


def covering(bound: str | None, block: int, axis: int, kept: int | None = None) -> str | int:
    """The blocks along ``axis`` that cover a guard bound ``bound``; when no guard bounds the
    axis, the host's stand-in number ``kept``, else a fixed number."""
    if bound is not None:
        return f"ceil_div({bound}, {block})"
    if kept is not None:
        return kept
    threads = THREADS if axis == 0 else _OTHER_THREADS
    return max(1, threads // block)


def scalar_bounds(bounds: dict, fn: A.Function) -> dict[int, str]:
    """Per axis, the text of a guard bound (a poly of :func:`_gid_bounds`) whose names are all
    scalar parameters of ``fn``."""
    from cuda2nki.lift.indexshape import poly_text

    scalars = {p.name for p in fn.params if isinstance(p.ty, A.ScalarType)}
    out = {}
    for axis, b in bounds.items():
        if b.is_const or not all(isinstance(a, str) and a in scalars for a in b.atoms()):
            continue
        out[axis] = str(poly_text(b))
    return out


def _note(fn: A.Function, site: A.LaunchSite, launch: dict, source: str) -> Diagnostic:
    what = f"launch grid {launch['grid']} block {launch['block']}"
    why = (
        f"{source}; sizes need no values: a grid over a guard follows the sizes check picks "
        "(set [launch] grid and block if the kernel needs another)"
    )
    return make("C2N2100", site.loc, what=what, kernel=fn.name, source=why)


def from_host(fn: A.Function, site: A.LaunchSite) -> OpenLaunch | None:
    """:func:`open_launch` from the host values of ``site`` (its grid and block followed
    through constants, locals and callers); None when the host values were not read."""
    from cuda2nki.lift.hostargs import arg_names, resolve, slots

    facts = site.host
    if facts is None:
        return None
    names = arg_names(fn, site)
    env = {}
    for slot in slots(fn, site):
        h = slot.value(facts)
        if h is not None and isinstance(h.value, int | float):
            env[slot.param] = h.value
    grid = [_grid_text(g, names, resolve, env) for g in facts.grid]
    block = [b.value if isinstance(b.value, int) and b.value > 0 else None for b in facts.block]
    got = open_launch(fn, site, grid, block)
    if got is None:
        return None
    fallback = [_fallback(g) for g in facts.grid]
    placeholder = [
        f if i in got.open_axes and i < len(fallback) and (f := fallback[i]) else g
        for i, g in enumerate(got.grid)
    ]
    return OpenLaunch(placeholder, got.block, got.open_axes, got.source)


def _at(text: str, env: dict) -> float:
    """``text``'s value at the host's values ``env`` (1 when it cannot be evaluated)."""
    from cuda2nki.binding import eval_c_expr

    try:
        return float(eval_c_expr(text, env))
    except Exception:  # noqa: BLE001 - a name the host gives no value: not known to be 0
        return 1.0


def _grid_text(g, names, resolve, env: dict) -> str | int | None:
    """A grid component in parameter names; None where the host computes it at run time: no
    value, a value that stands in for a run-time one (a default taken, see
    :func:`stand_in`), or a host value that is no block at all (``n / (128 * threads)`` at
    defaults that make it 0)."""
    if isinstance(g.value, int | float) and g.value <= 0:
        return None
    text = resolve(g.text, names)
    if text is not None and re.search(r"[A-Za-z_]", text):
        if _at(text, env) <= 0:  # `n / (128 * workers)` at the host's sizes: no block
            return None
        return text  # in the kernel's parameters: it follows the sizes check picks
    if stand_in(g):
        return None
    if text is not None:
        return text
    return g.value if isinstance(g.value, int) and g.value > 0 else None


#: how the notes of a host value taken for a run-time one end (see frontend.hostvals)
_STAND_IN = (
    "if the kernel needs another value)",
    "if the kernel needs others)",
    "with no default",
)


def stand_in(g) -> bool:
    """Whether host value ``g`` (a HostExpr) is a default taken for a value known at run time
    only (a device query's nominal GPU is not: a grid that fills the GPU is kept)."""
    return any(m in note for note in g.notes for m in _STAND_IN)


def _fallback(g) -> int | None:
    """The host's stand-in number of blocks of an open axis, kept where no guard bounds it."""
    v = g.value
    return v if isinstance(v, int) and v > 0 and stand_in(g) else None


def positive_launch(got: tuple | None) -> tuple | None:
    """``got`` (grid, block, source) unless a component of it is a number below 1: then None,
    and the launch is read again as open (:func:`from_host`)."""
    if got is None:
        return None
    from cuda2nki.lift.indexshape import _int_or

    for x in (*got[0], *got[1]):
        v = _int_or(x) if isinstance(x, str) else x
        if isinstance(v, int | float) and v <= 0:
            return None
    return got
