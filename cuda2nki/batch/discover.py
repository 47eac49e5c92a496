"""Finding the CUDA files of a tree and the flags each one is compiled with."""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cuda2nki.diagnostics import SourceLoc, error

CUDA_SUFFIXES = (".cu", ".cuh")
#: C/C++ headers: CUDA files too when they define a kernel (a book's ``common/book.h``), so
#: that kernel is counted once, in the header, not again in every file that includes it
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".inl")
_KERNEL_DEFINITION = re.compile(rb"\b__global__\b[^;{}]*\{")
_HEADER_BYTES = 4 << 20  # a larger header is not read for kernels


def is_cuda_file(path: Path) -> bool:
    """A ``.cu``/``.cuh`` file, or a header that defines a ``__global__`` function."""
    name = path.name
    if name.endswith(CUDA_SUFFIXES):
        return True
    return name.endswith(HEADER_SUFFIXES) and _defines_kernel(str(_real(path)))


@functools.lru_cache(maxsize=4096)
def _defines_kernel(real: str) -> bool:
    try:
        with open(real, "rb") as f:
            text = f.read(_HEADER_BYTES)
    except OSError:
        return False
    return _KERNEL_DEFINITION.search(_without_comments(text)) is not None


def _without_comments(text: bytes) -> bytes:
    return re.sub(rb"//[^\n]*|/\*.*?\*/", b" ", text, flags=re.DOTALL)


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    rel: str  # POSIX path relative to the input root
    defines: tuple[tuple[str, str], ...] = ()
    include_dirs: tuple[str, ...] = ()
    binding: Path | None = None  # sidecar <stem>.toml, when present


@dataclass(frozen=True)
class CompileFlags:
    defines: dict[str, str] = field(default_factory=dict)
    include_dirs: tuple[str, ...] = ()


def discover(
    root: Path,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    skip: Sequence[Path] = (),
    defines: dict[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    compile_db: dict[str, CompileFlags] | None = None,
) -> list[SourceFile]:
    """Every ``.cu``/``.cuh`` under ``root`` (sorted), and every header that defines a kernel,
    filtered by include/exclude globs.

    Globs match the POSIX path relative to ``root`` (``fnmatch``; ``*`` crosses directories).
    Hidden directories and the ``skip`` paths (e.g. an output directory) are not entered.
    Broken links and unreadable entries are kept: reading them reports the problem per file.
    """
    root = _real(root)
    skip_set = {_real(p) for p in skip}
    found: list[SourceFile] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and _real(here / d) not in skip_set
        )
        for name in sorted(filenames):
            path = here / name
            if not is_cuda_file(path):
                continue
            rel = path.relative_to(root).as_posix()
            if not _wanted(rel, include, exclude):
                continue
            flags = (compile_db or {}).get(str(_real(path))) or (compile_db or {}).get(str(path))
            d = dict(defines or {})
            inc = list(include_dirs)
            if flags:
                d = {**flags.defines, **d}
                inc = list(flags.include_dirs) + inc
            sidecar = path.with_suffix(".toml")
            found.append(
                SourceFile(
                    path,
                    rel,
                    tuple(sorted(d.items())),
                    tuple(inc),
                    sidecar if sidecar.is_file() else None,
                )
            )
    return found


def _wanted(rel: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    if include and not any(fnmatch.fnmatch(rel, g) for g in include):
        return False
    return not any(fnmatch.fnmatch(rel, g) for g in exclude)


def selected(
    root: str | Path, path: str | Path, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> bool:
    """Whether :func:`discover` over ``root`` with these globs lists ``path``: a kernel defined
    in such a file is counted there, not again in every file that includes it."""
    real_root, real = _real(Path(root)), _real(Path(path))
    if real_root not in real.parents or not is_cuda_file(real):
        return False
    rel = real.relative_to(real_root)
    if any(part.startswith(".") for part in rel.parts[:-1]):
        return False
    return _wanted(rel.as_posix(), include, exclude)


def _real(path: Path) -> Path:
    """``path`` with its links resolved where they resolve (a link loop or a dangling link is
    kept as it is, to be reported when the file is read)."""
    return Path(os.path.realpath(path))


def load_compile_db(path: Path) -> dict[str, CompileFlags]:
    """``compile_commands.json`` -> per-file ``-D``/``-I`` flags (keys: absolute file paths)."""
    try:
        entries = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise error(
            "C2N0001", SourceLoc(str(path), 1, 1), path=str(path), reason=str(exc)
        ) from None
    if not isinstance(entries, list):
        raise error(
            "C2N0001", SourceLoc(str(path), 1, 1), path=str(path), reason="expected a JSON list"
        )
    db: dict[str, CompileFlags] = {}
    for e in entries:
        if not isinstance(e, dict) or "file" not in e:
            continue
        directory = Path(e.get("directory", "."))
        args = e.get("arguments") or shlex.split(e.get("command", ""))
        file = Path(e["file"])
        file = file if file.is_absolute() else directory / file
        db[str(_real(file))] = _flags(args, directory)
    return db


def _flags(args: Sequence[str], directory: Path) -> CompileFlags:
    defines: dict[str, str] = {}
    incs: list[str] = []
    it = iter(range(len(args)))
    for i in it:
        a = args[i]
        if a in ("-D", "-I", "-isystem") and i + 1 < len(args):
            val = args[i + 1]
            next(it, None)
            a = a + val if a != "-isystem" else "-I" + val
        if a.startswith("-D"):
            name, _, value = a[2:].partition("=")
            defines[name] = value or "1"
        elif a.startswith("-I"):
            inc = Path(a[2:])
            incs.append(str(inc if inc.is_absolute() else directory / inc))
    return CompileFlags(defines, tuple(incs))
