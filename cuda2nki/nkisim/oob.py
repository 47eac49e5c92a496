"""Out-of-bounds accesses as the public NKI simulator reports them through its Python API.

The public simulator indexes a tensor's flattened elements with NumPy, so an out-of-bounds
indirect access raises exactly ``IndexError`` with NumPy's message about the flattened index
(``index 66048 is out of bounds for axis 0 with size 65536``), and public tests assert that
type and text.  The simulator's own entry points raise
:class:`~cuda2nki.nkisim.errors.DiagnosticIndexError` (C2N3019, at the port's line); a kernel
called directly (``kernel(...)``, ``nki.simulate``, ``simulate_kernel`` of the legacy API)
raises the public form, chained from (``__cause__``) and carrying (``.diagnostic``, a note) the
diagnostic.

Indexing with an index tile records, only when some element falls outside the tensor, the
first such flattened index and the tensor's element count; that is where NumPy's message comes
from.  Accesses whose flattened index is unknown keep the diagnostic's text.
"""

from __future__ import annotations

import weakref

import numpy as np

from cuda2nki.nkisim.errors import DiagnosticIndexError, fail

#: id(tensor) -> (weak reference to it, first out-of-bounds flattened index, element count).
_FIRST_OOB: dict[int, tuple[weakref.ref, int, int]] = {}


def record(tensor: object, flat: np.ndarray, inside: np.ndarray, size: int) -> None:
    """Note the first element of ``flat`` (C order) where ``inside`` is false, for ``tensor``."""
    bad = np.broadcast_to(flat, inside.shape)[~inside]
    if not bad.size:
        return
    key = id(tensor)
    _FIRST_OOB[key] = (weakref.ref(tensor, lambda _r: _FIRST_OOB.pop(key, None)), int(bad[0]), size)


def numpy_message(tensor: object) -> str | None:
    """NumPy's message for the recorded out-of-bounds access of ``tensor`` (or ``None``)."""
    ent = _FIRST_OOB.get(id(tensor))
    if ent is None or ent[0]() is not tensor:
        return None
    return f"index {ent[1]} is out of bounds for axis 0 with size {ent[2]}"


def out_of_bounds(tensor: object, detail: str) -> DiagnosticIndexError:
    """C2N3019 at the port's line for an access through ``tensor``, with NumPy's message."""
    exc = fail("C2N3019", detail=detail)
    assert isinstance(exc, DiagnosticIndexError)
    exc.numpy_message = numpy_message(tensor)
    return exc


def public_error(exc: DiagnosticIndexError) -> IndexError:
    """The exception the public simulator raises for ``exc``: exactly ``IndexError`` with
    NumPy's message where known (else the diagnostic's text), carrying the diagnostic."""
    out = IndexError(exc.numpy_message or str(exc))
    out.diagnostic = exc.diagnostic  # type: ignore[attr-defined]
    out.add_note(str(exc))
    return out
