"""Helpers shared by the subcommands: diagnostics output, reading files, writing atomically."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from cuda2nki.diagnostics import Diagnostic, render_all
from cuda2nki.fileio import read_regular, read_text, write_atomic

__all__ = ["KERNEL_HELP", "print_diagnostics", "read_text", "write_atomic"]

#: help of ``--kernel`` where a CUDA file may hold several kernels
KERNEL_HELP = (
    "kernel to work on (default: the binding's, or the only one); a template kernel launched "
    "with several template arguments in one file is named per instantiation, e.g. "
    "--kernel 'reduce<256>' or 'scale<128, float>'"
)


def print_diagnostics(diags: Iterable[Diagnostic], stream=None) -> None:
    diags = list(diags)
    if not diags:
        return
    stream = stream or sys.stderr
    sources: dict[str, list[str]] = {}
    for d in diags:
        if d.loc.file not in sources:
            try:
                raw = read_regular(Path(d.loc.file))
                sources[d.loc.file] = raw.decode("utf-8", "replace").splitlines()
            except OSError:
                sources[d.loc.file] = []
    print(render_all(diags, sources), file=stream)
