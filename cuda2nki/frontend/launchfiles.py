"""Launches in separately compiled files: a kernel defined in ``scale.cu`` and launched from
``main.cu``, which sees only its declaration (``__global__ void scale(float*, int);`` written
there or in a header it includes).

No file includes the kernel's file, so :mod:`cuda2nki.frontend.launchers` finds no includer;
the launch is found by name instead: the source files near the kernel's (under its directory,
else directly in the one above) whose text launches it (``scale<<<``, ``scale<64><<<``,
``cudaLaunchKernel((void*)scale, ...)``).  A file that defines a kernel of the same name is
another program's kernel (tutorial trees hold many ``reduce`` kernels side by side): its
launches are never taken; nor are those of a file that sees no declaration of the kernel
(in it, or in a header it includes), nor any for a kernel defined in a header, which only the
files including it can launch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from cuda2nki.frontend.launchers import (
    SOURCE_SUFFIXES,
    _candidates,
    _includes,
    _stamp,
    _text_at,
)


def launching_files(real: Path, kernels: Iterable[str]) -> list[Path]:
    """The source files near ``real`` (a resolved path) that launch one of ``kernels`` by name
    and do not define a kernel of that name, sorted: those under the kernel's directory, else
    those directly in the one above (not in its other subdirectories, which hold other programs
    in a tree of samples) unless that is a top-level one."""
    names = sorted({k.split("<")[0] for k in kernels if k})
    if not names or real.suffix.lower() not in SOURCE_SUFFIXES:
        return []  # a header's kernels are launched by the files including it, nothing else
    files = _candidates(real.parent)
    here = [p for p in files if p != real and _launches(p, names, files)]
    if here:
        return here
    above = real.parent.parent
    if len(above.parts) <= 2 or above == real.parent:
        return []
    # only the files of the directory above itself: its other subdirectories are other programs
    files = _candidates(above)
    return [p for p in files if p.parent == above and _launches(p, names, files)]


def _launches(p: Path, names: list[str], files: list[Path]) -> bool:
    """Whether ``p`` launches one of ``names``, declared in it or in a header it includes
    (one of ``files``), without defining a kernel of that name."""
    if p.suffix.lower() not in SOURCE_SUFFIXES:
        return False
    text = _text_at(str(p), _stamp(p))
    if "<<<" not in text and "cudaLaunch" not in text:
        return False
    for name in names:
        if not _launch_of(name).search(text) or _defines(text, name):
            continue
        if _declares(text, name) or any(_declares(h, name) for h in _headers(p, files)):
            return True
    return False


def _headers(p: Path, files: list[Path]) -> list[str]:
    """The texts of the files among ``files`` that ``p`` includes (by file name)."""
    wanted = _includes(p)
    return [_text_at(str(f), _stamp(f)) for f in files if f.name in wanted and f != p]


def _declares(text: str, name: str) -> bool:
    """Whether ``text`` declares kernel ``name`` without a body (``__global__ void k(...);``)."""
    pattern = rf"__global__[^;{{}}]*?\b{re.escape(name)}\s*\([^;{{}}]*\)\s*;"
    return re.search(pattern, text) is not None


def _launch_of(name: str) -> re.Pattern[str]:
    n = re.escape(name)
    return re.compile(
        rf"\b{n}\s*(?:<[^;{{}}<>]*(?:<[^;{{}}<>]*>[^;{{}}<>]*)*>)?\s*<<<"
        rf"|cudaLaunch\w*\s*\(\s*(?:\(\s*(?:const\s+)?void\s*\*\s*\)\s*)?&?\s*{n}\b"
    )


def _defines(text: str, name: str) -> bool:
    """Whether ``text`` defines a kernel named ``name`` (a body, not a declaration)."""
    pattern = rf"__global__[^;{{}}]*?\b{re.escape(name)}\s*\([^;{{}}]*\)\s*\{{"
    return re.search(pattern, text) is not None
