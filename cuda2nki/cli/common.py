"""Helpers shared by the subcommands: diagnostics output, reading files, writing atomically."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from cuda2nki.diagnostics import Diagnostic, error, render_all


def print_diagnostics(diags: Iterable[Diagnostic], stream=None) -> None:
    diags = list(diags)
    if not diags:
        return
    stream = stream or sys.stderr
    sources: dict[str, list[str]] = {}
    for d in diags:
        if d.loc.file not in sources:
            try:
                sources[d.loc.file] = Path(d.loc.file).read_text(errors="replace").splitlines()
            except OSError:
                sources[d.loc.file] = []
    print(render_all(diags, sources), file=stream)


def read_text(path: str | os.PathLike) -> str:
    """Read a user's input file as UTF-8, or raise C2N0001."""
    p = Path(path)
    try:
        return p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise error("C2N0001", path=str(p), reason="no such file") from None
    except IsADirectoryError:
        raise error("C2N0001", path=str(p), reason="is a directory") from None
    except PermissionError:
        raise error("C2N0001", path=str(p), reason="permission denied") from None
    except UnicodeDecodeError as exc:
        raise error("C2N0001", path=str(p), reason=f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise error("C2N0001", path=str(p), reason=exc.strerror or str(exc)) from None


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, p)
    except OSError as exc:
        raise error("C2N0004", path=str(p), reason=exc.strerror or str(exc)) from None
