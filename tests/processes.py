"""Finding processes a test started (by a token in their command line), for leak checks."""

from __future__ import annotations

import os


def processes_with(token: str) -> list[int]:
    """Live (not zombie) processes other than this one whose command line contains ``token``."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{p}/stat", "rb") as f:
                zombie = f.read().split(b") ", 1)[1][:1] == b"Z"
        except (OSError, IndexError):
            continue
        if token.encode() in cmd and not zombie:
            out.append(int(p))
    return out
