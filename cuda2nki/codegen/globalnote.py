"""The header line of a port whose kernel used file-scope ``__device__`` variables.

Such a variable became a tensor parameter of the port (see
:mod:`cuda2nki.frontend.deviceparams`): the port says which of its tensors stand for global
memory, so that a caller passes the memory the host or an earlier kernel filled and keeps what
the port returns as the variable's new contents.
"""

from __future__ import annotations

from typing import Any


def global_memory_note(fn: Any, binding: Any) -> list[str]:
    """One header line naming the tensors of ``fn`` that stand for ``__device__`` variables
    (none when it has none); ``fn`` is the kernel's AST function, read only by its params."""
    names = [p.name for p in getattr(fn, "params", ()) if getattr(p, "symbol", False)]
    if not names:
        return []
    roles = {t.name: t.role for t in getattr(binding, "tensors", ())}
    written = [n for n in names if roles.get(n) in ("out", "inout")]
    line = (
        f"Global memory: {', '.join(names)} -- file-scope __device__ variables in CUDA, tensor "
        "parameters here (pass the contents the host or an earlier kernel left there"
    )
    if written:
        line += f"; the returned {', '.join(written)} are their new contents"
    return [line + ")."]


__all__ = ["global_memory_note"]
