"""Reading users' files and writing outputs atomically (never a partial file, never a traceback)."""

from __future__ import annotations

import contextlib
import os
import stat
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: read once: ``os.umask`` can only be read by setting it
_UMASK = _umask()


def _mode_for(p: Path) -> int:
    """An existing file's permissions, else those of a newly created file (0666 less umask)."""
    try:
        return stat.S_IMODE(p.stat().st_mode)
    except OSError:
        return 0o666 & ~_UMASK


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``.

    The file gets the permissions it had, or those of a file created the usual way (the
    temporary file's private 0600 would otherwise leak into every output); the temporary file
    is removed if anything fails.
    """
    p = Path(path)
    tmp = None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, _mode_for(p))
        os.replace(tmp, p)
        tmp = None
    except OSError as exc:
        raise error(
            "C2N0004", SourceLoc(str(p), 0, 0), path=str(p), reason=exc.strerror or str(exc)
        ) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
