"""Reading users' files and writing outputs atomically (never a partial file, never a traceback)."""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import tempfile
from pathlib import Path

from cuda2nki.diagnostics import SourceLoc, error

#: the largest input file read (a source file this size is a mistake, or /dev/zero behind a link)
MAX_INPUT_BYTES = 64 << 20


def read_regular(p: Path) -> bytes:
    """The bytes of a regular file; a FIFO, device or socket is refused without blocking on it
    (opened non-blocking, checked with fstat), and so is a file over ``MAX_INPUT_BYTES``."""
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(str(p))
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular("not a regular file (a FIFO, device or socket); skipped")
        if st.st_size > MAX_INPUT_BYTES:
            raise NotRegular(f"larger than {MAX_INPUT_BYTES >> 20} MiB; skipped")
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            return f.read(MAX_INPUT_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)


class NotRegular(OSError):
    pass


def _latin1_bytes(err: UnicodeDecodeError) -> tuple[str, int]:
    """Decode-error handler: the bytes that are not UTF-8 read as Latin-1 characters."""
    bad = err.object[err.start : err.end]
    return bytes(bad).decode("latin-1"), err.end


codecs.register_error("cuda2nki-latin1", _latin1_bytes)


def decode_source(data: bytes) -> str:
    """A source file's text: UTF-8, and any byte sequence that is not UTF-8 read as Latin-1.

    C and CUDA compilers accept such bytes (old files carry Latin-1 or Windows-1252 comments
    and strings); a file with NUL bytes is not text and raises UnicodeDecodeError.  Line ends
    are read as the compilers read them: CR LF and a lone CR end a line as LF does, so a
    backslash before a Windows line end continues the line."""
    if b"\x00" in data:
        at = data.index(b"\x00")
        raise UnicodeDecodeError("utf-8", data, at, at + 1, "a NUL byte: not a text file")
    return unix_lines(data.decode("utf-8", errors="cuda2nki-latin1"))


def unix_lines(text: str) -> str:
    """``text`` with every CR LF and lone CR line end written as LF (no column moves: a CR
    only ever stands at the end of a line)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_text(path: str | os.PathLike, *, source: bool = False) -> str:
    """Read a user's input file as UTF-8, or raise C2N0001.  ``source``: a C/CUDA source, whose
    bytes that are not UTF-8 are read as Latin-1 (see :func:`decode_source`)."""
    p = Path(path)
    try:
        data = read_regular(p)
        return decode_source(data) if source else data.decode("utf-8")
    except NotRegular as exc:
        raise error("C2N0001", SourceLoc(str(p), 0, 0), path=str(p), reason=str(exc)) from None
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
            reason=f"not UTF-8 text ({exc.reason} at byte {exc.start})"
            if "NUL" not in exc.reason
            else f"not text ({exc.reason} at byte {exc.start})",
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
