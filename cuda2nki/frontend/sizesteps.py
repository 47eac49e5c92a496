"""Check sizes the host's launch grids cover (see :mod:`cuda2nki.frontend.sizemacros`).

A host that computes its grid with truncation (``dim3 grid((size_t)(ceil((float)M) /
((float)256)))``, ``M / BLOCK``) covers every element only at multiples of its step: at the
check's ragged values the grid leaves a tail unlaunched, or is 0 blocks, and the kernel checked
is not the kernel the user runs.  The launches are read at the source's sizes to learn, for each
launch axis, which size macro it follows and how many threads per element it launches; a check
value under that is raised to the next multiple of a step (8, 16, ... 1024) at which the grid
covers it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

#: the steps tried, smallest first, for a size whose grid does not cover it
STEPS = (8, 16, 32, 64, 128, 256, 512, 1024)

_Axis = tuple[int, str, int]  # (launch index, kernel, axis)


def covered_values(
    values: Mapping[str, str],
    path: str,
    text: str,
    include_dirs: Sequence[str] = (),
    defines: Mapping[str, str] | None = None,
    source: Mapping[str, int] | None = None,
    tu: Any = None,
) -> dict[str, str]:
    """``values`` (size macro -> the check's value) with each value that the file's launch grids
    do not cover raised to the next multiple of the smallest step that they cover (distinct from
    the other values); ``source``: the macros' values in the source (read when not given);
    ``tu``: the file parsed at its own sizes, when the caller has it (parsed again if not)."""
    from cuda2nki.frontend.sizemacros import _int_value, effective_values

    if not values:
        return {}
    defines = dict(defines or {})
    if source is None:
        source = effective_values(list(values), path, text, include_dirs, defines)
    if any(n not in source for n in values):
        return dict(values)
    at = {n: str(v) for n, v in source.items()}
    base = _launched(tu) if tu is not None else _threads(path, text, include_dirs, defines, at)
    out = dict(values)
    now = _threads(path, text, include_dirs, defines, out)
    shrink = max(Fraction(_int_value(v) or 0, source[n]) for n, v in values.items())
    if all(now.get(k, 0) >= t * shrink for k, t in base.items()):
        return out  # no axis launches less than its share: nothing to learn per macro
    follows = _follows(base, values, source, path, text, include_dirs, defines, at)
    if not follows:
        return out
    for name in values:
        axes = {k: r for k, (n, r) in follows.items() if n == name}
        want = _int_value(out[name])
        if want is None or _covers(now, axes, want):
            continue
        for step in STEPS:
            cand = -(-want // step) * step
            while str(cand) in (v for n, v in out.items() if n != name):
                cand += step  # distinct values: a transposed index shows
            if cand >= source[name]:
                break
            trial = {**out, name: str(cand)}
            got = _threads(path, text, include_dirs, defines, trial)
            if _covers(got, axes, cand):
                out, now = trial, got
                break
    return out


def _covers(threads: Mapping[_Axis, int], axes: Mapping[_Axis, Fraction], size: int) -> bool:
    """Whether each axis of ``axes`` launches at least its share of threads for ``size``."""
    return all(threads.get(k, 0) >= ratio * size for k, ratio in axes.items())


def _follows(
    base: Mapping[_Axis, int],
    values: Mapping[str, str],
    source: Mapping[str, int],
    path: str,
    text: str,
    include_dirs: Sequence[str],
    defines: Mapping[str, str],
    at: Mapping[str, str],
) -> dict[_Axis, tuple[str, Fraction]]:
    """The launch axes that follow exactly one size macro of ``values``: axis -> (the macro,
    threads per element at the source's sizes)."""
    deps: dict[_Axis, list[str]] = {}
    for name in values:
        doubled = _threads(path, text, include_dirs, defines, {**at, name: str(2 * source[name])})
        for k, t in base.items():
            if doubled.get(k) != t:
                deps.setdefault(k, []).append(name)
    out = {}
    for k, names in deps.items():
        if len(names) == 1 and base[k] > 0 and source[names[0]] > 0:
            out[k] = (names[0], Fraction(base[k], source[names[0]]))
    return out


def _threads(
    path: str,
    text: str,
    include_dirs: Sequence[str],
    defines: Mapping[str, str],
    values: Mapping[str, str],
) -> dict[_Axis, int]:
    """Threads launched along each axis of each launch of the file (grid times block, where the
    host says both), the size macros at ``values`` (they win over the file's own lines)."""
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.frontend import parse_source
    from cuda2nki.frontend.sizemacros import defines_win

    try:
        with defines_win(values):
            tu = parse_source(
                text, path, defines={**dict(defines), **dict(values)}, include_dirs=include_dirs
            )
    except (DiagnosticError, RecursionError):
        return {}
    return _launched(tu)


def _launched(tu: Any) -> dict[_Axis, int]:
    """Threads launched along each axis of each launch site of ``tu``."""
    out: dict[_Axis, int] = {}
    for i, site in enumerate(tu.launch_sites):
        host = site.host
        if host is None:
            continue
        for d, (g, b) in enumerate(zip(host.grid, host.block)):
            if isinstance(g.value, int) and isinstance(b.value, int):
                out[(i, site.kernel, d)] = g.value * b.value
    return out


def check_sizes(
    path: str,
    text: str,
    include_dirs: Sequence[str] = (),
    defines: Mapping[str, str] | None = None,
    small: bool = False,
    tu: Any = None,
) -> dict[str, str]:
    """The check's values for the file's size macros that are too large to simulate (name ->
    ``-D`` value; see :func:`cuda2nki.frontend.sizemacros.check_values`, ``small`` for a port
    that simulates every CUDA block), each raised where the host's grid does not cover it."""
    from cuda2nki.frontend.sizemacros import check_values, size_macros

    defines = dict(defines or {})
    macros = size_macros(path, text, include_dirs, defines)
    values = check_values(macros, path, text, include_dirs, defines, small=small)
    return covered_values(values, path, text, include_dirs, defines, tu=tu)
