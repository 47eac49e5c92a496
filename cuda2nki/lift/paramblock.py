"""A launch whose block is written in a kernel parameter: ``k<<<rows, dim3(K, 1024 / K)>>>(...,
K, ...)``.

The host passes the same value as the block's width and as a kernel argument (a layer width, a
row length), so the kernel's work depends on the block through that parameter.  A port fixes its
block, so the parameter is fixed with it: it gets one value (the host's, where the source gives
it; else the first of :data:`CANDIDATES` that makes a valid block, every component a positive
whole number and at most 1,024 threads), the block is evaluated there, and the parameter is
*tied* to that value (``K = { tie = "32" }``), so that check keeps it while it varies the other
sizes.  A note names the launch and the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from cuda2nki.frontend import ast as A
from cuda2nki.lift.openlaunch import OpenLaunch, open_launch

#: values tried for a block parameter the host gives no value (a warp first)
CANDIDATES = (32, 64, 16, 128, 8, 256, 4, 2, 1)
#: the most threads a block may have
MAX_THREADS = 1024
#: the key of a launch dict holding the parameters tied with the block (removed once read)
PINNED = "pinned_params"


@dataclass(frozen=True)
class ParamBlock:
    """The launch at the chosen values: ``grid`` texts, ``block`` numbers, ``pinned`` (parameter
    -> value) and the note's text (an :class:`OpenLaunch` where the host computes grid axes at
    run time: they cover the kernel's guards, as :mod:`cuda2nki.lift.openlaunch` chooses)."""

    grid: list[str | int]
    block: list[int]
    pinned: dict[str, int]
    source: str | OpenLaunch


def param_block(
    fn: A.Function, site: A.LaunchSite, grid: list, block: list, host: dict
) -> ParamBlock | None:
    """The launch of ``fn`` at ``site`` whose ``block`` texts (in kernel parameter names; None
    where not expressible) name integer scalar parameters; ``host`` maps parameters to the
    host's values (HostExpr).  None when the block names anything else or no value fits."""
    from cuda2nki.binding import eval_c_expr

    if not block or any(b is None for b in block):
        return None
    scalars = {p.name for p in fn.params if _is_int_scalar(p.ty)}
    words = {w for b in block for w in _names(str(b))}
    if not words or not words <= scalars:
        return None
    known = {n: int(host[n].value) for n in words if _given(host.get(n))}
    for cand in (None, *CANDIDATES):
        if cand is None and len(known) < len(words):
            continue
        env = {n: known.get(n, cand) for n in words}
        try:
            vals = [eval_c_expr(str(b), env) for b in block]
        except Exception:  # noqa: BLE001 - a block that does not evaluate at these values
            continue
        if not _valid(vals):
            continue
        out_block = [int(v) for v in vals]
        out_grid = [None if g is None else _substituted(g, env) for g in grid]
        picked = ", ".join(f"{n} = {v}" for n, v in sorted(env.items()))
        why = "the host's value" if cand is None else "a value that makes a valid block"
        pins = (
            f"block '{site.block_text}' is written in the kernel's parameters: {picked} ({why}), "
            "tied so that check keeps it while it varies the other sizes"
        )
        if None not in out_grid:
            source = f"the launch at {site.loc.file}:{site.loc.line}, whose {pins}"
            return ParamBlock(out_grid, out_block, dict(env), source)
        opened = open_launch(fn, site, out_grid, out_block)  # run-time grid axes: covering
        if opened is None:
            return None
        opened = replace(opened, source=f"{opened.source}; {pins}")
        return ParamBlock(opened.grid, opened.block, dict(env), opened)
    return None


def _is_int_scalar(ty: A.CType) -> bool:
    return isinstance(ty, A.ScalarType) and not ty.is_float and ty.name not in ("bool", "void")


def _names(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text)) - {"ceil_div"}


def _given(h) -> bool:  # noqa: ANN001 - a HostExpr or None
    """A host value the source gives (not one taken by default for a run-time value)."""
    return h is not None and isinstance(h.value, int | float) and not h.notes and h.value > 0


def _valid(vals: list) -> bool:
    if any(float(v) != int(v) or int(v) < 1 for v in vals):
        return False
    n = 1
    for v in vals:
        n *= int(v)
    return n <= MAX_THREADS


def _substituted(g: str | int, env: dict[str, int]) -> str | int:
    if not isinstance(g, str):
        return g
    text = re.sub(r"[A-Za-z_]\w*", lambda m: str(env.get(m.group(0), m.group(0))), g)
    return int(text) if text.strip().isdigit() else text
