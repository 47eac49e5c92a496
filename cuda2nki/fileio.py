"""Reading users' files and writing outputs atomically (never a partial file, never a traceback)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cuda2nki.diagnostics import SourceLoc, error


def read_text(path: str | os.PathLike) -> str:
    """Read a user's input file as UTF-8, or raise C2N0001."""
    p = Path(path)
    try:
        return p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise error(
            "C2N0001", SourceLoc(str(p), 0, 0), path=str(p), reason="no such file"
        ) from None
    except IsADirectoryError:
        raise error(
            "C2N0001", SourceLoc(str(p), 0, 0), path=str(p), reason="is a directory"
        ) from None
    except PermissionError:
        raise error(
            "C2N0001", SourceLoc(str(p), 0, 0), path=str(p), reason="permission denied"
        ) from None
    except UnicodeDecodeError as exc:
        raise error(
            "C2N0001",
            SourceLoc(str(p), 0, 0),
            path=str(p),
            reason=f"not UTF-8 text ({exc.reason} at byte {exc.start})",
        ) from None
    except OSError as exc:
        raise error(
            "C2N0001", SourceLoc(str(p), 0, 0), path=str(p), reason=exc.strerror or str(exc)
        ) from None


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
        raise error(
            "C2N0004", SourceLoc(str(p), 0, 0), path=str(p), reason=exc.strerror or str(exc)
        ) from None
