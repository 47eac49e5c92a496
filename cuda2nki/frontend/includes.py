"""The preprocessor's side of header discovery (:mod:`cuda2nki.frontend.headers`).

A ``#include <name>`` that is not a system header is read like a quoted one: when it is on the
usual path or found in the tree, the file goes through the full preprocessor; when it is nowhere,
the include is reported (C2N1004) and the file keeps its fast path.  For the full preprocessor,
:class:`IncludeResolver` answers pcpp's "include not found" with the folder where the header was
found (a note says where, C2N1005; C2N1006 when equally near headers differ) or reports it missing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from cuda2nki.diagnostics import Diagnostic, SourceLoc, make
from cuda2nki.frontend.headers import Found, find_header, is_system_header

_ANGLE_RE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<([^<>\n]+)>", re.M)


def _shown(path: str) -> str:
    """A header's path as diagnostics show it: relative to the working folder when below it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def include_col(line: str, spelled: str) -> int:
    """The 1-based column of the header name in an ``#include`` line (1 when not found)."""
    at = line.find(spelled)
    return at + 1 if at >= 0 else 1


def on_usual_path(spelled: str, filename: str, include_dirs: tuple[str, ...]) -> bool:
    """Whether ``spelled`` is a file in a ``-I`` folder or beside ``filename``."""
    base = os.path.dirname(os.path.abspath(filename)) if filename else os.getcwd()
    return any(os.path.isfile(os.path.join(d, spelled)) for d in (*include_dirs, base))


def found_notes(spelled: str, hit: Found, loc: SourceLoc) -> list[Diagnostic]:
    """What a header found in the tree is reported as: where it was found (a note) and, when
    equally near headers differ, which were passed over (a warning)."""
    out = [make("C2N1005", loc, path=spelled, found=_shown(hit.path))]
    if hit.others:
        others = ", ".join(_shown(p) for p in hit.others)
        out.append(make("C2N1006", loc, path=spelled, found=_shown(hit.path), others=others))
    return out


@dataclass(frozen=True)
class AngleScan:
    """The non-system ``#include <...>`` lines of a file: whether any is on the usual path or in
    the tree (then the file needs the full preprocessor), and the missing ones, reported."""

    needs_pcpp: bool
    missing: tuple[Diagnostic, ...] = ()


def scan_angle(text: str, filename: str, include_dirs: tuple[str, ...]) -> AngleScan:
    if "<" not in text or "include" not in text:
        return AngleScan(False)
    missing: list[Diagnostic] = []
    for m in _ANGLE_RE.finditer(text):
        spelled = m.group(1).strip()
        if is_system_header(spelled):
            continue
        if on_usual_path(spelled, filename, include_dirs) or find_header(spelled, filename):
            return AngleScan(True)
        line = text.count("\n", 0, m.start()) + 1
        col = include_col(m.group(0), spelled) + (m.start() - text.rfind("\n", 0, m.start()) - 1)
        missing.append(make("C2N1004", SourceLoc(filename, line, col), path=spelled))
    return AngleScan(False, tuple(missing))


def active_only(missing: tuple[Diagnostic, ...], out_lines: list[str]) -> list[Diagnostic]:
    """The missing includes on lines the conditionals kept (an include line stays non-empty in the
    line-for-line output only when its group is active)."""
    return [
        d for d in missing if 0 < d.loc.line <= len(out_lines) and out_lines[d.loc.line - 1].strip()
    ]


@dataclass
class IncludeResolver:
    """pcpp's "include not found", answered: a system header passes through silently; another
    found in the tree gives the folder to read it from (and a note); else C2N1004."""

    filename: str
    text: str
    shown: Callable[[str], str]  # an absolute source path as diagnostics name it
    diags: list[Diagnostic] = field(default_factory=list)
    discover: bool = True  # False: a header not on the include path is missing
    #: the directives answered with a folder (kept alive: their ids identify them), so that a
    #: header that cannot be opened there is reported instead of answered again
    _given: dict[int, object] = field(default_factory=dict)
    _lines: dict[str, list[str]] = field(default_factory=dict)

    def resolve(self, spelled: str, directive: object) -> str | None:
        """The folder to search for ``spelled`` (included by pcpp's ``directive`` token), or
        None after reporting it (a system header: silently)."""
        if is_system_header(spelled):
            return None
        src = getattr(directive, "source", None) or os.path.abspath(self.filename)
        line = int(getattr(directive, "lineno", 0) or 0)
        loc = SourceLoc(self.shown(src), line, include_col(self._line(src, line), spelled))
        again = id(directive) in self._given
        hit = find_header(spelled, src) if self.discover and not again else None
        if hit is not None:
            self._given[id(directive)] = directive
            self.diags.extend(d for d in found_notes(spelled, hit, loc) if d not in self.diags)
            return hit.search_dir
        self.diags.append(make("C2N1004", loc, path=spelled))
        return None

    def _line(self, source: str, line: int) -> str:
        lines = self._lines.get(source)
        if lines is None:
            if os.path.abspath(source) == os.path.abspath(self.filename):
                text = self.text
            else:
                try:
                    with open(source, encoding="utf-8", errors="replace") as f:
                        text = f.read()
                except OSError:
                    text = ""
            lines = self._lines[source] = text.split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""


__all__ = ["AngleScan", "IncludeResolver", "active_only", "found_notes", "scan_angle"]
