"""How many kernels a migrated file stands for, counted in the text before any parsing (the
file's time limit is a share per kernel): the ``__global__`` functions of the file and of the
files it includes with ``#include "..."`` that are not migrated on their own (``kernel1.cpp``,
``body.inc`` pulled into a ``.cu``), so a file whose kernels all live in such includes is not
given the time of one kernel.  An included file that discovery lists counts its own kernels.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

_GLOBAL = re.compile(rb"\b__global__\b")
_QUOTED = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
_MAX_DEPTH = 8
_MAX_BYTES = 4 << 20  # a larger included file is not read


def count_kernels(
    path: Path,
    read: Callable[[Path], bytes],
    listed: Callable[[Path], bool],
    include_dirs: Sequence[str] = (),
) -> int:
    """The ``__global__`` count of ``path`` and of its quoted includes (recursively) for which
    ``listed(file)`` is False; ``read`` gives a file's bytes (OSError: not counted)."""
    seen: set[str] = set()

    def visit(p: Path, depth: int) -> int:
        real = os.path.realpath(p)  # a link loop resolves as far as it goes, never raises
        if real in seen or depth > _MAX_DEPTH:
            return 0
        seen.add(real)
        try:
            text = read(p)
        except OSError:
            return 0
        n = len(_GLOBAL.findall(text))
        for m in _QUOTED.finditer(text):
            inc = _resolve(m.group(1).decode("utf-8", "replace"), p.parent, include_dirs)
            if inc is not None and not listed(inc):
                n += visit(inc, depth + 1)
        return n

    return visit(path, 0)


def _resolve(name: str, here: Path, include_dirs: Sequence[str]) -> Path | None:
    for d in (here, *map(Path, include_dirs)):
        p = d / name
        try:
            if p.is_file() and p.stat().st_size <= _MAX_BYTES:
                return p
        except OSError:
            continue
    return None
