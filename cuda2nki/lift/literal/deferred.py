"""Pointers declared without an initialiser and assigned later (``float *row; ... row = a + k;``).

The declaration binds the name to :class:`Unset`; the first assignment binds it to the buffer
it points into, provided it is made at the declaration's own level of the program (not inside a
branch or loop, where the other path would leave it unset).  A read before that is refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unset:
    """A pointer local not assigned yet; ``level`` is the nesting of emitted blocks at its
    declaration."""

    name: str
    level: int


def first_assignment_problem(cur: Unset, level: int) -> str | None:
    """Why the first assignment of ``cur`` at block nesting ``level`` cannot bind it, or None."""
    if level != cur.level:
        return f"pointer '{cur.name}' first assigned inside a branch or loop"
    return None


def read_problem(name: str) -> str:
    return f"pointer '{name}' read before it is assigned"
