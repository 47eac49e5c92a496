"""Which of a file's diagnostics concern which kernel.

The front end reports on the whole file; a command that works on one kernel reports what concerns
that kernel (its own diagnostics and those of the file as a whole, such as a missing include) as
they are, and what concerns only the file's *other* kernels as notes (or not at all): an error in
a kernel that is not being ported does not make the port an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, Literal

from cuda2nki.diagnostics import Diagnostic, Severity

Key = tuple[str, str, int, int, str]


def _key(d: Diagnostic) -> Key:
    """A diagnostic's identity whatever its severity (a demoted one keeps its key)."""
    return (d.code, d.loc.file, d.loc.line, d.loc.col, d.message)


def owners(tu: Any) -> dict[Key, frozenset[str]]:
    """The kernels each of the file's diagnostics concerns: those the front end refused for it and
    those whose definition it lies in; the errors of a refused device function that no kernel
    calls concern ``DEVICE + its name`` (no kernel).  A diagnostic no one owns concerns the
    whole file."""
    out: dict[Key, set[str]] = {}
    for name, diags in tu.rejected.items():
        for d in diags:
            out.setdefault(_key(d), set()).add(name)
    spans = [
        (fn.name, fn.loc.file, fn.loc.line, getattr(fn.loc, "end_line", None) or fn.loc.line)
        for fn in tu.kernels
    ]
    for d in tu.diagnostics:
        for name, file, first, last in spans:
            if d.loc.file == file and first <= d.loc.line <= last:
                out.setdefault(_key(d), set()).add(name)
    # a refused device function no kernel calls concerns none of them
    for fname, diags in getattr(tu, "refused_device", {}).items():
        for d in diags:
            out.setdefault(_key(d), {DEVICE + fname})
    return {k: frozenset(v) for k, v in out.items()}


#: the owner of a refused device function's diagnostics that no kernel calls: ``DEVICE + name``
DEVICE = "__device__ "


def _owners_text(concerns: frozenset[str]) -> str:
    kernels = sorted(k for k in concerns if not k.startswith(DEVICE))
    if kernels:
        return "in kernel " + ", ".join(f"'{k}'" for k in kernels)
    names = ", ".join(f"'{k.removeprefix(DEVICE)}'" for k in sorted(concerns))
    return f"in device function {names}, which no kernel calls"


def for_kernel(
    tu: Any,
    kernel: str,
    diags: Iterable[Diagnostic] | None = None,
    *,
    others: Literal["note", "drop"] = "note",
    owned: dict[Key, frozenset[str]] | None = None,
) -> list[Diagnostic]:
    """``diags`` (default: the file's) as they concern ``kernel``: those about other kernels only
    become notes that name the kernel (``others="note"``) or are left out (``"drop"``).
    ``owned``: :func:`owners` of ``tu``, when the caller has it already."""
    owned = owners(tu) if owned is None else owned
    out = []
    for d in tu.diagnostics if diags is None else diags:
        concerns = owned.get(_key(d), frozenset())
        if not concerns or kernel in concerns:
            out.append(d)
        elif others == "note":
            where = _owners_text(concerns)
            out.append(
                dataclasses.replace(
                    d,
                    severity=min(d.severity, Severity.NOTE),
                    notes=(*d.notes, f"{where}, not the kernel '{kernel}' worked on"),
                )
            )
    return out


__all__ = ["for_kernel", "owners"]
