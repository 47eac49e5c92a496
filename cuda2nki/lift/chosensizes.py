"""Which sizes of an inferred binding are the check's choice, not the source's.

An inferred binding takes its sizes from the host code where it can, but a host's production
sizes are too large to simulate (they are halved, :func:`cuda2nki.lift.infer._shrink`), a size
the host does not give gets a default, a stepped size is rounded up to its step, and a constant
launch too large to simulate is scaled down with its tensors
(:mod:`cuda2nki.lift.constlaunch`).  Findings whose figure follows the problem's size (small
DMAs, idle partitions) measured at such sizes say nothing certain about the user's run; the
check reads this record (``chosen_sizes`` of the binding's metadata) to judge them so
(:func:`cuda2nki.fidelity.smallsizes.at_inferred_sizes`).

The record maps each chosen item to the source's value: a number (or a launch grid) where the
host gives one, None where the source does not say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the key of the record in an inferred binding dict (and so in ``Binding.meta``)
KEY = "chosen_sizes"

#: the record's name for a constant launch grid scaled down with its tensors
GRID = "launch grid"


def chosen_sizes(
    params: Mapping[str, Any],
    host: Mapping[str, Any],
    sizes: set[str],
    grid_was: list[Any] | None,
    grid_now: list[Any] | None,
) -> dict[str, int | float | str | None]:
    """The sizes among ``sizes`` whose value in ``params`` is not the host's (``host``: name ->
    host value with a ``.value``), with the host's value (None: the host gives none, one that
    sizes nothing, or a default the front end took), and the constant launch grid when it was scaled (``grid_was`` ->
    ``grid_now``)."""
    out: dict[str, int | float | str | None] = {}
    for name in sorted(sizes):
        value = params.get(name)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        h = host.get(name)
        was = getattr(h, "value", None)
        if not isinstance(was, int | float) or was <= 0 or guessed(h):
            out[name] = None
        elif int(was) != value:
            out[name] = int(was)
    if grid_was is not None and grid_now is not None and list(grid_was) != list(grid_now):
        out[GRID] = str(list(grid_was))
    return out


#: what the notes of a host value say when the host code does not give it and the front end
#: took a default (:mod:`cuda2nki.frontend.hostvals`, :mod:`cuda2nki.frontend.cmdline`): read
#: from the command line with no default, written at run time by a call, passed by no caller
GUESS_MARKERS = ("with no default", "if the kernel needs another")


def guessed(h: Any) -> bool:
    """Whether the host value ``h`` (or a part of it) is a default the front end took."""
    return any(m in note for note in getattr(h, "notes", ()) for m in GUESS_MARKERS)


def describe(chosen: Mapping[str, Any], label: str) -> str:
    """Why a size-bound finding under ``chosen`` sizes, measured at the test point ``label``, is
    a note: at which sizes it was measured and the source's, where known."""
    known = [f"{n} = {v}" for n, v in chosen.items() if v is not None]
    unknown = [n for n, v in chosen.items() if v is None]
    parts = [", ".join(known)] if known else []
    if unknown:
        parts.append(f"the source gives no value for {', '.join(unknown)}")
    where = f" ({label})" if label else ""
    return (
        f"measured at sizes the check chose{where}, not the source's ({'; '.join(parts)}): a "
        "note, not a failure; check with a binding at the sizes you run (cuda2nki bind) to "
        "judge it"
    )
