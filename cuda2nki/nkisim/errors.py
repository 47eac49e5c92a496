"""Diagnostics raised by the simulator, located at the port's own source line.

The location is found from the Python stack: the innermost frame whose code is not part of this
package is the port's call site (a helper function inside the port counts as the port).
"""

from __future__ import annotations

import os
import sys

from cuda2nki.diagnostics import Diagnostic, DiagnosticError, SourceLoc, make

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def _is_internal(filename: str) -> bool:
    return filename.startswith(_PKG_DIR) or filename.startswith("<frozen importlib")


#: id(code) -> (code, inside the simulator?, {f_lasti: line}, {f_lasti: (file, line)}), for the
#: stack walks that find the port's frame on every instruction.  Keyed by id: hashing a code
#: object hashes its contents (measurable for a kernel's code); the code object is held so that
#: its id cannot be reused.  ``frame.f_lineno`` scans the code's line table on every access
#: (O(code size)), while the line of an instruction offset never changes, so lines (and the
#: site tuples built from them) are cached too.
_CODES: dict[int, tuple[object, bool, dict[int, int], dict[int, tuple[str, int]]]] = {}


def code_entry(code) -> tuple[object, bool, dict[int, int], dict[int, tuple[str, int]]]:
    """The ``_CODES`` entry of ``code`` (created on first use)."""
    ent = _CODES.get(id(code))
    if ent is None or ent[0] is not code:
        ent = _CODES[id(code)] = (code, _is_internal(code.co_filename), {}, {})
    return ent


def frame_line(f) -> int:
    """``f.f_lineno``, cached per (code, instruction offset)."""
    lines = code_entry(f.f_code)[2]
    lasti = f.f_lasti
    line = lines.get(lasti)
    if line is None:
        line = lines[lasti] = f.f_lineno or 0
    return line


def port_frame(depth: int = 1):
    """The innermost frame outside the simulator, or ``None``."""
    try:
        f = sys._getframe(depth)
    except ValueError:  # fewer frames than that
        return None
    return outside_sim(f)[0]


def outside_sim(f) -> tuple:
    """``(frame, code entry)`` of the innermost frame from ``f`` outward that is not simulator
    code, or ``(None, None)`` (code_entry, inlined: this runs for allocations and instructions
    issued from helpers)."""
    codes = _CODES
    while f is not None:
        code = f.f_code
        ent = codes.get(id(code))
        if ent is None or ent[0] is not code:
            ent = codes[id(code)] = (code, _is_internal(code.co_filename), {}, {})
        if not ent[1]:
            return f, ent
        f = f.f_back
    return None, None


_getframe = sys._getframe


def port_site(sim_frames: int = 1) -> tuple[str, int]:
    """``(file, line)`` of the port's call site (cheap: used for every allocation).

    The search starts above the ``sim_frames`` innermost callers (simulator code: at least the
    caller), which are never materialised as frame objects.  The tuple is shared by all the
    allocations made at one instruction offset.
    """
    try:
        f, ent = outside_sim(_getframe(1 + sim_frames))
    except ValueError:
        return ("<unknown>", 0)
    if f is None:
        return ("<unknown>", 0)
    site = ent[3].get(f.f_lasti)
    if site is None:
        site = new_site(f, ent)
    return site


def new_site(f, ent) -> tuple[str, int]:
    """``(file, line)`` of frame ``f`` at its current instruction, cached in its code's entry."""
    lasti = f.f_lasti
    lines = ent[2]
    line = lines.get(lasti)
    if line is None:
        line = lines[lasti] = f.f_lineno or 0
    site = ent[3][lasti] = (f.f_code.co_filename, line)
    return site


def port_loc() -> SourceLoc:
    """Location (with column, where Python knows it) of the port's current call."""
    f = port_frame(2)
    if f is None:
        return SourceLoc("<unknown>", 0, 0)
    col = 1
    try:
        pos = list(f.f_code.co_positions())[f.f_lasti // 2]
        if pos[0] == f.f_lineno and pos[2] is not None:
            col = pos[2] + 1
    except (IndexError, AttributeError, TypeError):
        pass
    return SourceLoc(f.f_code.co_filename, f.f_lineno, col)


def diag(code: str, **fmt: object) -> Diagnostic:
    return make(code, port_loc(), **fmt)


class DiagnosticIndexError(DiagnosticError, IndexError):
    """An out-of-bounds access (C2N3019): an ``IndexError``, the type the public NKI simulator
    raises for it, that carries the diagnostic (``except IndexError`` and ``except
    DiagnosticError`` both catch it)."""

    #: NumPy's message for the access (``index N is out of bounds for axis 0 with size M``),
    #: where the flattened index is known (see :mod:`cuda2nki.nkisim.oob`).
    numpy_message: str | None = None


class NkiValidationError(Exception):
    """``nki.isa.NkiValidationError``: the type the public NKI API documents for a violated
    hardware constraint."""


class DiagnosticValidationError(DiagnosticError, NkiValidationError):
    """A violated hardware constraint: an :class:`NkiValidationError` that carries the
    diagnostic (``except NkiValidationError`` and ``except DiagnosticError`` both catch it)."""


#: Diagnostics of hardware constraints (partition and matmul sizes, PSUM banks, memories an
#: engine may touch, start partitions, operand shapes and dtypes, capacities, access patterns,
#: clashing affine_range iterations): raised as :class:`DiagnosticValidationError`.
HARDWARE_CONSTRAINTS = frozenset(f"C2N30{n:02d}" for n in (*range(2, 19), 22, 26, 27, 28, 29, 30))

#: Python exception type of the diagnostics whose public counterpart has a documented type.
_EXC_TYPES: dict[str, type[DiagnosticError]] = {"C2N3019": DiagnosticIndexError}
_EXC_TYPES |= {code: DiagnosticValidationError for code in HARDWARE_CONSTRAINTS}


def error(d: Diagnostic) -> DiagnosticError:
    """The exception that carries ``d``: of the type the public API documents for it."""
    return _EXC_TYPES.get(d.code, DiagnosticError)(d)


def fail(code: str, **fmt: object) -> DiagnosticError:
    """A :class:`DiagnosticError` at the port's current line (``raise fail(...)``); an
    out-of-bounds access is a :class:`DiagnosticIndexError`, a violated hardware constraint a
    :class:`DiagnosticValidationError`."""
    return error(make(code, port_loc(), **fmt))


def unsupported(api: str, detail: str = "") -> DiagnosticError:
    return fail("C2N3001", api=api, detail=f" ({detail})" if detail else "")


def invalid(api: str, detail: str) -> DiagnosticError:
    return fail("C2N3021", api=api, detail=detail)
