"""The other files a file's result depends on, noted while the file is processed.

A file's ports are not a function of its own bytes only: the headers it includes, the files
whose device functions are linked in (:mod:`cuda2nki.frontend.linkage`) and the files that
include it, whose launches bind its kernels (:mod:`cuda2nki.frontend.launchers`), all shape
them.  Each of those mechanisms notes the files it uses with :func:`note`; within
:func:`recording` they are collected, so that a cached result can name (and a later run check)
every file it was computed from."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar

_SEEN: ContextVar[set[str] | None] = ContextVar("cuda2nki_dependencies", default=None)


@contextlib.contextmanager
def recording() -> Iterator[set[str]]:
    """Within: the real paths of the files noted are added to the set yielded."""
    seen: set[str] = set()
    token = _SEEN.set(seen)
    try:
        yield seen
    finally:
        _SEEN.reset(token)


def note(paths: Iterable[str | os.PathLike[str]]) -> None:
    """The files ``paths`` were read to compute the result being recorded (if any)."""
    seen = _SEEN.get()
    if seen is None:
        return
    for p in paths:
        seen.add(os.path.realpath(p))


def digest(path: str) -> str:
    """The SHA-256 of a file's bytes; ``missing`` when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return "missing"


def digests(paths: Iterable[str]) -> dict[str, str]:
    """Each path with its :func:`digest`, sorted by path."""
    return {p: digest(p) for p in sorted(set(paths))}


def unchanged(recorded: Mapping[str, str]) -> bool:
    """Whether every file of ``recorded`` (path -> digest) still has the same bytes."""
    return all(digest(p) == d for p, d in recorded.items())


def noted() -> tuple[str, ...]:
    """The files noted so far in the current :func:`recording` (sorted; none outside one)."""
    return tuple(sorted(_SEEN.get() or ()))
