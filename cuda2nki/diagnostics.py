"""One diagnostic type for the whole tool.

Every problem cuda2nki reports -- a CUDA construct it cannot read, a porting decision a human must
check, an NKI hardware-constraint violation, a numerical mismatch, a performance finding -- is a
:class:`Diagnostic` with a stable id (``C2Nxxxx``), a severity and a source location.  Ids are
declared once, in the per-family rule tables under :mod:`cuda2nki.rules`; :func:`make` refuses an
id that is not declared there, so the catalogue cannot drift from the code.

Id families: ``C2N1xxx`` front end / SIMT interpreter, ``C2N2xxx`` porting decisions and literal
lowerings, ``C2N3xxx`` NKI constraint violations and simulator limits, ``C2N4xxx`` numerical
fidelity, ``C2N5xxx`` performance and idiom findings on a port.
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


class Severity(enum.IntEnum):
    NOTE = 0
    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:  # clang spelling
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]


@dataclass(frozen=True, eq=False)
class SourceLoc:
    """A 1-based position in a user's file (after mapping back through the preprocessor).

    Equality, hashing and ordering go by the five fields, whatever the subclass: the front end
    hands out a subclass that works its fields out when first read (see
    :mod:`cuda2nki.frontend.locs`), and it equals the plain location of the same place."""

    file: str
    line: int
    col: int = 1
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        if self.line <= 0:  # a whole-file (or location-less) problem: no line to point at
            return self.file
        return f"{self.file}:{self.line}:{self.col}"

    def key(self) -> tuple[str, int, int, int | None, int | None]:
        return (self.file, self.line, self.col, self.end_line, self.end_col)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, SourceLoc):
            return self.key() == other.key()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.key())

    def __lt__(self, other: SourceLoc) -> bool:
        return self.key() < other.key() if isinstance(other, SourceLoc) else NotImplemented

    def __le__(self, other: SourceLoc) -> bool:
        return self.key() <= other.key() if isinstance(other, SourceLoc) else NotImplemented

    def __gt__(self, other: SourceLoc) -> bool:
        return self.key() > other.key() if isinstance(other, SourceLoc) else NotImplemented

    def __ge__(self, other: SourceLoc) -> bool:
        return self.key() >= other.key() if isinstance(other, SourceLoc) else NotImplemented


UNKNOWN_LOC = SourceLoc("cuda2nki", 0, 0)


class Note(str):
    """A note's text and, where it points elsewhere than its diagnostic (the CUDA line behind a
    port's finding, the other end of a conflict), its own location.  A plain ``str`` note is
    about the diagnostic's location; either renders as ``file:line:col: note: text``."""

    loc: SourceLoc | None

    def __new__(cls, text: str, loc: SourceLoc | None = None) -> Note:
        note = super().__new__(cls, text)
        note.loc = loc
        return note

    def __reduce__(self) -> tuple[object, ...]:
        return (Note, (str(self), self.loc))


def note_loc(note: str) -> SourceLoc | None:
    """The location a note carries of its own (None for a plain ``str`` note)."""
    return getattr(note, "loc", None)


# --------------------------------------------------------------------------- colour

_SGR = {
    "bold": "1",
    "error": "1;31",
    "warning": "1;35",
    "note": "1;36",
    "caret": "1;32",
}


def use_color(stream: object) -> bool:
    """Colour for a terminal, as clang does; ``NO_COLOR`` (non-empty) turns it off and
    ``FORCE_COLOR`` (non-empty) on, ``NO_COLOR`` winning; ``TERM=dumb`` is never coloured."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def paint(text: str, style: str, color: bool) -> str:
    """``text`` in the clang colour of ``style`` (bold, error, warning, note, caret) if ``color``."""
    return f"\x1b[{_SGR[style]}m{text}\x1b[0m" if color else text


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    loc: SourceLoc = UNKNOWN_LOC
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "id": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "file": self.loc.file,
            "line": self.loc.line,
            "col": self.loc.col,
            "notes": list(self.notes),
            "related": related(self.notes),
        }

    def render(self, source_lines: Sequence[str] | None = None, color: bool = False) -> str:
        """Clang style: ``file:line:col: severity: message [ID]``, the source line and a caret,
        then each note as ``file:line:col: note: text`` (its own location, else the
        diagnostic's); ``color`` adds clang's ANSI colours."""
        sev = str(self.severity)
        head = (
            paint(f"{self.loc}:", "bold", color)
            + " "
            + paint(f"{sev}:", sev, color)
            + " "
            + paint(f"{self.message} [{self.code}]", "bold", color)
        )
        out = [head]
        if source_lines is not None and 1 <= self.loc.line <= len(source_lines):
            text = source_lines[self.loc.line - 1].rstrip("\n").expandtabs(1)
            out.append(text)
            out.append(" " * max(self.loc.col - 1, 0) + paint("^", "caret", color))
        for n in self.notes:
            where = note_loc(n) or self.loc
            out.append(f"{paint(f'{where}:', 'bold', color)} {paint('note:', 'note', color)} {n}")
        return "\n".join(out)


def related(notes: Iterable[str]) -> list[dict]:
    """The notes that carry a location of their own: ``{"file", "line", "col", "message"}``."""
    out = []
    for n in notes:
        loc = note_loc(n)
        if loc is not None:
            out.append({"file": loc.file, "line": loc.line, "col": loc.col, "message": str(n)})
    return out


class DiagnosticError(Exception):
    """Raised to abort an operation with one (or more) diagnostics; never shown as a traceback."""

    def __init__(self, diagnostics: Diagnostic | Iterable[Diagnostic]):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__("; ".join(f"{d.loc}: {d.message} [{d.code}]" for d in self.diagnostics))

    @property
    def diagnostic(self) -> Diagnostic:
        return self.diagnostics[0]


# --------------------------------------------------------------------------- rule registry


@dataclass(frozen=True)
class Rule:
    """One catalogue entry. ``message`` is a ``str.format`` template."""

    code: str
    severity: Severity
    title: str
    message: str
    explanation: str = ""
    example: str = ""
    fix: str = ""
    retired: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)


_RULES: dict[str, Rule] = {}


def register(*rules: Rule) -> None:
    for r in rules:
        if r.code in _RULES and _RULES[r.code] != r:
            raise ValueError(f"diagnostic id {r.code} declared twice")
        _RULES[r.code] = r


def rules() -> dict[str, Rule]:
    """All declared rules, loading every family table."""
    from cuda2nki import rules as _families  # noqa: F401  (import registers the tables)

    _families.load_all()
    return dict(sorted(_RULES.items()))


def rule(code: str) -> Rule:
    got = _RULES.get(code)
    if got is None:  # the family tables load on first use
        got = rules().get(code)
        if got is None:
            raise KeyError(f"unknown diagnostic id {code}")
    return got


def make(
    code: str,
    loc: SourceLoc = UNKNOWN_LOC,
    severity: Severity | None = None,
    notes: Sequence[str] = (),
    **fmt: object,
) -> Diagnostic:
    """Build a diagnostic from its declared rule, formatting the message template with ``fmt``."""
    r = rule(code)
    if r.retired:
        raise ValueError(f"diagnostic id {code} is retired")
    try:
        message = r.message.format(**fmt)
    except (KeyError, IndexError) as exc:  # a programming error: the template needs more fields
        raise ValueError(f"{code}: message template needs {exc}") from exc
    return Diagnostic(
        code, r.severity if severity is None else severity, message, loc, tuple(notes)
    )


def error(
    code: str, loc: SourceLoc = UNKNOWN_LOC, notes: Sequence[str] = (), **fmt: object
) -> DiagnosticError:
    """Convenience: a :class:`DiagnosticError` carrying ``make(code, ...)`` (raise it)."""
    return DiagnosticError(make(code, loc, notes=notes, **fmt))


def render_all(
    diags: Iterable[Diagnostic],
    sources: dict[str, Sequence[str]] | None = None,
    color: bool = False,
) -> str:
    sources = sources or {}
    return "\n".join(d.render(sources.get(d.loc.file), color) for d in diags)


def to_json(diags: Iterable[Diagnostic]) -> str:
    return json.dumps([d.to_dict() for d in diags], indent=2)


def worst(diags: Iterable[Diagnostic]) -> Severity | None:
    sev = [d.severity for d in diags]
    return max(sev) if sev else None
