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


def _spans(tu: Any) -> dict[str, tuple[str, int, int]]:
    """Kernel name -> (file, first line, last line) of its definition."""
    out = {}
    for fn in tu.kernels:
        loc = fn.loc
        out[fn.name] = (loc.file, loc.line, getattr(loc, "end_line", None) or loc.line)
    return out


def _inside(d: Diagnostic, span: tuple[str, int, int]) -> bool:
    file, first, last = span
    return d.loc.file == file and first <= d.loc.line <= last


def foreign(tu: Any, kernel: str) -> dict[Key, str]:
    """The file's diagnostics that concern other kernels only: key -> the kernel concerned.

    A diagnostic concerns another kernel when the front end refused that kernel for it, or when it
    lies inside that kernel's definition, and it neither lies inside ``kernel``'s definition nor
    is one ``kernel`` was refused for."""
    spans = _spans(tu)
    own_span = spans.get(kernel)
    own = {_key(d) for d in tu.rejected.get(kernel, ())}
    out: dict[Key, str] = {}
    for other, diags in tu.rejected.items():
        for d in diags:
            if other != kernel and _key(d) not in own:
                out.setdefault(_key(d), other)
    for d in tu.diagnostics:
        if _key(d) in own or (own_span is not None and _inside(d, own_span)):
            out.pop(_key(d), None)
            continue
        for other, span in spans.items():
            if other != kernel and _inside(d, span):
                out.setdefault(_key(d), other)
                break
    return out


def for_kernel(
    tu: Any,
    kernel: str,
    diags: Iterable[Diagnostic] | None = None,
    *,
    others: Literal["note", "drop"] = "note",
) -> list[Diagnostic]:
    """``diags`` (default: the file's) as they concern ``kernel``: those about other kernels only
    become notes that name the kernel (``others="note"``) or are left out (``"drop"``)."""
    alien = foreign(tu, kernel)
    out = []
    for d in tu.diagnostics if diags is None else diags:
        other = alien.get(_key(d))
        if other is None:
            out.append(d)
        elif others == "note":
            out.append(
                dataclasses.replace(
                    d,
                    severity=min(d.severity, Severity.NOTE),
                    notes=(*d.notes, f"in kernel '{other}', not the kernel '{kernel}' worked on"),
                )
            )
    return out


__all__ = ["for_kernel", "foreign"]
