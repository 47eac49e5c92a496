"""The other files a file's result depends on, noted while the file is processed.

A file's ports are not a function of its own bytes only: the headers it includes, the files
whose device functions are linked in (:mod:`cuda2nki.frontend.linkage`) and the files that
include it, whose launches bind its kernels (:mod:`cuda2nki.frontend.launchers`), all shape
them.  Each of those mechanisms notes the files it uses with :func:`note`; within
:func:`recording` they are collected, so that a cached result can name (and a later run check)
every file it was computed from.  A search of a folder (for includers, callers, definitions) is
noted too, as :func:`note_listing`: a file added there or removed may change the result."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar

_SEEN: ContextVar[set[str] | None] = ContextVar("cuda2nki_dependencies", default=None)
#: how a searched folder is named among the files (a real path never starts so)
LISTING = "listing:"


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
        text = os.fspath(p)  # a searched folder noted by an inner recording stays as it is
        seen.add(text if text.startswith(LISTING) else os.path.realpath(text))


def note_listing(root: str | os.PathLike[str]) -> None:
    """The source files under the folder ``root`` were searched for the result (if recorded)."""
    seen = _SEEN.get()
    if seen is not None:
        seen.add(LISTING + os.path.realpath(root))


def _listing(root: str) -> str:
    """The SHA-256 of the names of the source files a search under ``root`` looks at."""
    from pathlib import Path

    from cuda2nki.frontend.launchers import _candidates

    names = "\n".join(str(p.relative_to(root)) for p in _candidates(Path(root)))
    return hashlib.sha256(names.encode("utf-8", "replace")).hexdigest()


def digest(path: str) -> str:
    """The SHA-256 of a file's bytes (of a searched folder's :func:`_listing`); ``missing``
    when it cannot be read."""
    if path.startswith(LISTING):
        return _listing(path[len(LISTING) :])
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return "missing"


def digests(paths: Iterable[str], memo: dict[str, str] | None = None) -> dict[str, str]:
    """Each path with its :func:`digest`, sorted by path (each computed once in ``memo``)."""
    return {p: _memo_digest(p, memo) for p in sorted(set(paths))}


def unchanged(recorded: Mapping[str, str], memo: dict[str, str] | None = None) -> bool:
    """Whether every file of ``recorded`` (path -> digest) still has the same bytes (each
    searched folder the same files); ``memo`` keeps digests across calls of one run."""
    return all(_memo_digest(p, memo) == d for p, d in recorded.items())


def _memo_digest(path: str, memo: dict[str, str] | None) -> str:
    if memo is None:
        return digest(path)
    if path not in memo:
        memo[path] = digest(path)
    return memo[path]


def noted() -> tuple[str, ...]:
    """The files noted so far in the current :func:`recording` (sorted; none outside one)."""
    return tuple(sorted(_SEEN.get() or ()))
