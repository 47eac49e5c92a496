"""Choosing the kernel of a translation unit that a command works on."""

from __future__ import annotations

from typing import Any

from cuda2nki.diagnostics import DiagnosticError, SourceLoc, make
from cuda2nki.frontend.ast import TranslationUnit


def select_kernel(tu: TranslationUnit, name: str | None, binding: Any = None) -> str:
    """The kernel to work on: ``name``, else the binding's, else the file's only ``__global__``."""
    name = name or (binding.kernel if binding else None)
    names = [k.name for k in tu.kernels]
    if name:
        if name in names:
            return name
        if name in tu.rejected:
            raise DiagnosticError(list(tu.rejected[name]))
        raise DiagnosticError(
            make(
                "C2N0002",
                SourceLoc(tu.file, 1, 1),
                option="--kernel",
                reason=f"no kernel '{name}' in {tu.file}; kernels: {', '.join(names) or 'none'}",
            )
        )
    if len(names) == 1:
        return names[0]
    if not names and tu.rejected:
        raise DiagnosticError([d for ds in tu.rejected.values() for d in ds])
    raise DiagnosticError(
        make(
            "C2N0002",
            SourceLoc(tu.file, 1, 1),
            option="--kernel",
            reason=f"{tu.file} has {len(names)} kernels ({', '.join(names) or 'none'}); name one with --kernel",
        )
    )
