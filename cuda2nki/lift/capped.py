"""Capped launch grids: ``min(cap, ceil_div(n, b))`` blocks.

A reduction that caps its grid (a grid-stride loop inside, one partial result per block in
``out[blockIdx.x]``) launches a number of blocks that is not a polynomial in its sizes.  The
analyses treat the capped count as one size atom of its own, named by its canonical text
(``min(64,(n+255)/256)``: arguments without spaces, sorted), so the same count written in the
grid and in a tensor shape is the same atom.  Its value at a test point is that text evaluated
with the point's sizes (:func:`cuda2nki.binding.eval_c_expr`), and a port computes it as ``min``
of its arguments.
"""

from __future__ import annotations

import ast as pyast
from collections.abc import Mapping


def capped_text(tree: pyast.expr) -> str | None:
    """The canonical atom text of a two-argument ``min(...)`` call, or None for anything else."""
    if not (
        isinstance(tree, pyast.Call)
        and isinstance(tree.func, pyast.Name)
        and tree.func.id == "min"
        and len(tree.args) == 2
        and not tree.keywords
    ):
        return None
    texts = sorted(pyast.unparse(a).replace(" ", "") for a in tree.args)
    return f"min({texts[0]},{texts[1]})"


def is_capped(atom: object) -> bool:
    """Whether an analysis atom is a capped count made by :func:`capped_text`."""
    return isinstance(atom, str) and atom.startswith("min(") and atom.endswith(")")


def capped_args(atom: str) -> tuple[pyast.expr, pyast.expr]:
    """The two arguments of a capped atom, as Python expressions."""
    tree = pyast.parse(atom, mode="eval").body
    assert isinstance(tree, pyast.Call) and len(tree.args) == 2
    return tree.args[0], tree.args[1]


def with_capped_values(point: Mapping, atoms: set) -> dict:
    """``point`` (scalar values) plus the value of each capped atom there; an atom whose sizes
    the point does not give is left out."""
    from cuda2nki.binding import eval_c_expr

    out = dict(point)
    for a in sorted(a for a in atoms if is_capped(a)):
        try:
            out[a] = int(eval_c_expr(a, point))
        except (KeyError, ValueError, ZeroDivisionError, TypeError):
            continue
    return out
