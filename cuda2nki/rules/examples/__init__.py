"""Runnable examples for the diagnostic catalogue, one module per id family.

:data:`EXAMPLES` maps an id to an :class:`Example` (files plus the command or snippet that raises
it); :data:`NO_EXAMPLE` maps the few ids that no input can trigger to the reason why.
"""

from __future__ import annotations

import importlib

from cuda2nki.rules.examples.base import (
    INPUTS,
    Example,
    Outcome,
    command_line,
    render_example,
    run_example,
    write_example,
)

__all__ = [
    "EXAMPLES",
    "INPUTS",
    "NO_EXAMPLE",
    "Example",
    "Outcome",
    "command_line",
    "render_example",
    "run_example",
    "write_example",
]

_MODULES = ("general", "frontend", "simt", "lift", "ir", "port", "nkisim", "fidelity", "findings")


def _collect() -> tuple[dict[str, Example], dict[str, str]]:
    examples: dict[str, Example] = {}
    missing: dict[str, str] = {}
    for name in _MODULES:
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        for table, into in ((mod.EXAMPLES, examples), (mod.NO_EXAMPLE, missing)):
            clash = set(table) & (set(examples) | set(missing))
            if clash:
                raise ValueError(f"example ids listed twice: {sorted(clash)}")
            into.update(table)
    return dict(sorted(examples.items())), dict(sorted(missing.items()))


EXAMPLES, NO_EXAMPLE = _collect()
