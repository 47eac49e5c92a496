"""A launch grid written with a host constant that is also passed as a size argument.

``kernel<<<(ds + 255) / 256, 256>>>(x, y, ds)`` with ``const size_t ds = 1 << 26;``: the front
end folds ``ds`` into the grid, which reads as the constant 262144, while the kernel's ``n``
is ``ds``.  Once check runs the kernel at a smaller ``n`` (the host's size is too large to
simulate), a constant grid launches hundreds of thousands of idle blocks.  The grid as written
names the argument, so it is rewritten in the parameter's name, ``(n + 255) / 256``, when that
spelling gives the same number at the host's values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_WORD = re.compile(r"[A-Za-z_]\w*")


def grid_in_params(
    grid: list, grid_text: str, names: Mapping[str, str], values: Mapping[str, int | float]
) -> list:
    """``grid`` (one entry per axis, as inferred) with each constant axis whose source text
    (``grid_text``, the axes separated by top-level commas, an optional ``dim3(...)`` around
    them) names an argument passed for a parameter (``names``: argument text -> parameter)
    rewritten in the parameter names.  ``values``: the host's value of each parameter; an axis
    is rewritten only when its new spelling evaluates to the same number."""
    axes = _axes(grid_text)
    if len(axes) != len(grid):
        return grid
    out = list(grid)
    for k, (g, text) in enumerate(zip(grid, axes)):
        if not isinstance(g, int):
            continue
        got = _rewrite(text, names)
        if got is not None and _same(got, g, values):
            out[k] = got
    return out


def _rewrite(text: str, names: Mapping[str, str]) -> str | None:
    """``text`` with every word that is a renamed argument replaced by its parameter; None if
    none is, or if a word other than a parameter remains."""
    params = set(names.values())
    hit = False

    def sub(m: re.Match[str]) -> str:
        nonlocal hit
        word = m.group(0)
        if word in names and names[word] != word or word in params:
            hit = True
            return names.get(word, word)
        return word

    out = _WORD.sub(sub, text)
    if not hit:
        return None
    return out


def _same(text: str, want: int, values: Mapping[str, int | float]) -> bool:
    from cuda2nki.binding import eval_c_expr

    try:
        return int(eval_c_expr(text, dict(values))) == want
    except Exception:  # noqa: BLE001 - a spelling the evaluator does not take: leave the grid
        return False


def _axes(text: str) -> list[str]:
    """The axes of a grid's source text: ``dim3(a, b)`` or ``a`` (commas inside parentheses
    belong to calls)."""
    t = text.strip()
    m = re.fullmatch(r"(?:dim3\s*)?\((.*)\)", t, re.S)
    inner = m.group(1) if m and t.startswith("dim3") else t
    parts, depth, cur = [], 0, []
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        cur.append(ch)
    parts.append("".join(cur).strip())
    return parts
