"""The macros under which a file that includes another one reaches it.

A program often includes its device code in one configuration of its build only::

    #ifdef USE_GPU            // the Makefile passes -DUSE_GPU
    #include "gpu.cuh"        // which includes config.h, then kernels.cuh
    #else
    #include "cpu.h"
    #endif

Read without that macro, ``main.cu`` never reaches ``kernels.cuh``, so the kernels there cannot be
read with the macros, types and device functions ``main.cu`` defines before them.
:func:`enabling_macros` names the macros that make active each conditional group enclosing an
``#include`` on the way from an including file to the file (through any headers):
``#ifdef X``, ``#if defined(X)``, ``#if X``, ``#elif X``, ``#if X == 3`` (or ``>=``, ``>``: X is
given the least value that holds), conjunctions of these, and the first alternative of a
disjunction.  A group that needs a macro *undefined* (``#ifndef X``, ``#if !X``, an ``#else``)
gives nothing: such a group is active unless something defines the macro (an include guard is the
usual case).  :func:`reached_units` reads again, with those macros, each including file whose
translation unit does not hold the file, and says so with a note (C2N1008).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cuda2nki.diagnostics import Diagnostic, SourceLoc, make
from cuda2nki.frontend.ast import TranslationUnit

_NAME = r"[A-Za-z_]\w*"
_DIRECTIVE_RE = re.compile(r"^[ \t]*#[ \t]*(\w+)(.*)$")
_INCLUDE_RE = re.compile(r'^\s*[<"]([^">]+)[">]')
_COMMENT_RE = re.compile(r"/\*.*?\*/|//.*$")
_DEFINED_RE = re.compile(rf"defined\s*\(\s*({_NAME})\s*\)|defined\s+({_NAME})")
_PLAIN_RE = re.compile(_NAME)
_COMPARE_RE = re.compile(rf"({_NAME})\s*(==|>=|>)\s*(\d+)[uUlL]*")
#: names the preprocessor already defines (see ``preprocess.PREDEFINED``) or that are keywords
_NEVER = frozenset({"true", "false", "defined"})


@dataclass(frozen=True)
class Condition:
    """The condition of the active branch of a conditional group: ``#if``/``#elif`` text, or
    ``defined(X)`` for ``#ifdef X``; None for a branch no macro can make active."""

    line: int
    text: str | None


@dataclass(frozen=True)
class GuardedInclude:
    """An ``#include`` with the conditions of the groups enclosing it, outermost first."""

    written: str
    line: int
    conditions: tuple[Condition, ...]


@dataclass(frozen=True)
class Enabling:
    """Macros (name, value) that make an including file reach a file, and the first
    conditional line that needs them."""

    macros: tuple[tuple[str, str], ...]
    file: str
    line: int


def guarded_includes(text: str) -> tuple[GuardedInclude, ...]:
    """The ``#include`` lines of ``text`` with the conditions that keep each one."""
    out: list[GuardedInclude] = []
    stack: list[Condition] = []
    for line, name, rest in _directive_lines(text):
        if name in ("if", "ifdef", "ifndef"):
            stack.append(_opening(line, name, rest))
        elif name == "elif" and stack:
            stack[-1] = Condition(line, _clean(rest))
        elif name == "else" and stack:
            stack[-1] = Condition(line, None)
        elif name == "endif" and stack:
            stack.pop()
        elif name == "include":
            m = _INCLUDE_RE.match(rest)
            if m:
                out.append(GuardedInclude(m.group(1), line, tuple(stack)))
    return tuple(out)


def _directive_lines(text: str) -> list[tuple[int, str, str]]:
    """(line, directive name, rest) of each directive, continuation lines joined."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        first = i
        whole = lines[i]
        while whole.endswith("\\") and i + 1 < len(lines):
            i += 1
            whole = whole[:-1] + " " + lines[i]
        m = _DIRECTIVE_RE.match(whole)
        if m:
            out.append((first + 1, m.group(1), m.group(2)))
        i += 1
    return out


def _opening(line: int, name: str, rest: str) -> Condition:
    words = _clean(rest).split()
    if name == "ifdef":
        return Condition(line, f"defined({words[0]})" if words else None)
    if name == "ifndef":
        return Condition(line, None)
    return Condition(line, _clean(rest))


def _clean(text: str) -> str:
    return _COMMENT_RE.sub(" ", text).strip()


def macros_for(condition: str) -> tuple[tuple[str, str], ...]:
    """The macros (name, value) that make ``condition`` hold, as far as a conjunction of
    ``defined(X)``, ``X`` and ``X == N`` / ``X >= N`` / ``X > N`` tells (the first alternative
    of a disjunction); nothing for anything else."""
    first = _split_top(_unwrap(condition), "||")[0]
    out: list[tuple[str, str]] = []
    for atom in _split_top(_unwrap(first), "&&"):
        got = _atom_macro(_unwrap(atom))
        if got is not None and got[0] not in _NEVER:
            out.append(got)
    return tuple(out)


def _atom_macro(atom: str) -> tuple[str, str] | None:
    m = _DEFINED_RE.fullmatch(atom)
    if m:
        return (m.group(1) or m.group(2), "1")
    if _PLAIN_RE.fullmatch(atom):
        return (atom, "1")
    m = _COMPARE_RE.fullmatch(atom)
    if m:
        value = int(m.group(3)) + (1 if m.group(2) == ">" else 0)
        return (m.group(1), str(value))
    return None


def _unwrap(text: str) -> str:
    """``text`` without parentheses enclosing all of it."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _closes_at_end(text):
        text = text[1:-1].strip()
    return text


def _closes_at_end(text: str) -> bool:
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def _split_top(text: str, op: str) -> list[str]:
    """``text`` split at ``op`` outside parentheses."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and text.startswith(op, i):
            parts.append(text[start:i])
            i += len(op)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


@lru_cache(maxsize=4096)
def _guarded_at(path: str, stamp: tuple[int, int]) -> tuple[GuardedInclude, ...]:
    from cuda2nki.frontend.launchers import _text_at

    return guarded_includes(_text_at(path, stamp))


def _guarded(p: Path) -> tuple[GuardedInclude, ...]:
    from cuda2nki.frontend.launchers import _stamp

    return _guarded_at(str(p), _stamp(p))


def enabling_macros(
    includer: Path, target: Path, files: Sequence[Path], defines: Mapping[str, str]
) -> Enabling | None:
    """The macros under which ``includer`` reaches ``target`` through the headers among
    ``files`` (the files searched for includers), leaving out those ``defines`` gives; None
    when no conditional group on the way needs one."""
    from cuda2nki.frontend.launchers import HEADER_SUFFIXES, _names

    reach = _reaching(target, [p for p in files if p.suffix.lower() in HEADER_SUFFIXES])
    from cuda2nki.frontend.preprocess import PREDEFINED

    known = set(defines) | set(PREDEFINED)
    macros: dict[str, str] = {}
    first: tuple[str, int] | None = None
    seen, todo = {includer}, [includer]
    while todo:
        f = todo.pop(0)
        for inc in _guarded(f):
            hits = [t for t in reach if _names(f, inc.written, t)]
            if not hits:
                continue
            for cond in inc.conditions:
                for name, value in macros_for(cond.text) if cond.text else ():
                    if name not in known and name not in macros:
                        macros[name] = value
                        first = first or (str(f), cond.line)
            todo.extend(t for t in hits if t != target and t not in seen)
            seen.update(hits)
    if not macros or first is None:
        return None
    return Enabling(tuple(macros.items()), first[0], first[1])


def _reaching(target: Path, headers: list[Path]) -> set[Path]:
    """``target`` and the headers that include it, directly or through each other."""
    from cuda2nki.frontend.launchers import _names

    reach = {target}
    grew = True
    while grew:
        grew = False
        for h in headers:
            if h not in reach and any(_names(h, g.written, t) for g in _guarded(h) for t in reach):
                reach.add(h)
                grew = True
    return reach


def reached_units(
    real: Path,
    units: tuple[TranslationUnit, ...],
    defines: Mapping[str, str] | None,
    include_dirs: tuple[str, ...],
    refused: tuple[str, ...] = (),
) -> tuple[tuple[TranslationUnit, ...], dict[str, Diagnostic]]:
    """``units`` (of files including ``real``) with each that does not hold ``real``'s code
    read again with the macros that make it reach ``real`` (through the headers of the folder
    holding both; ``refused``: the file's refused kernels, see ``adopt``); and for each unit so read, by its file, the note saying which macros it was
    read with."""
    from cuda2nki.frontend.adopt import _holds

    given = dict(defines or {})
    out: list[TranslationUnit] = []
    notes: dict[str, Diagnostic] = {}
    for u in units:
        again, en = None, None
        if not _holds(u, str(real), refused):
            en = enabling_macros(Path(u.file), real, _files_around(Path(u.file), real), given)
        if en is not None:
            again = _read_with(u.file, {**given, **dict(en.macros)}, include_dirs)
        if again is None or en is None or not _holds(again, str(real), refused):
            out.append(u)
            continue
        out.append(again)
        shown = ", ".join(f"{n}={v}" for n, v in en.macros)
        loc = SourceLoc(en.file, en.line, 1)
        where = f"{Path(en.file).name}:{en.line}"
        notes[again.file] = make(
            "C2N1008", loc, includer=Path(u.file).name, macros=shown, where=where
        )
    return tuple(out), notes


def with_reach_note(tu: TranslationUnit, notes: Mapping[str, Diagnostic]) -> TranslationUnit:
    """``tu`` with the notes of :func:`reached_units` (each including file read with macros)."""
    new = tuple(d for d in notes.values() if d not in tu.diagnostics)
    return dataclasses.replace(tu, diagnostics=tu.diagnostics + new) if new else tu


def _files_around(includer: Path, real: Path) -> list[Path]:
    """The source files of the folder holding both ``includer`` and ``real``."""
    from cuda2nki.frontend.launchers import _candidates

    return _candidates(Path(os.path.commonpath([includer.resolve(), real])))


def _read_with(
    file: str, defines: Mapping[str, str], include_dirs: tuple[str, ...]
) -> TranslationUnit | None:
    """The translation unit of ``file`` read with ``defines`` (None when it cannot be read)."""
    from cuda2nki.frontend.deps import note
    from cuda2nki.frontend.launchers import _foreign_units, _stamp

    source = ((file, _stamp(Path(file))),)
    got, read = _foreign_units(source, tuple(sorted(defines.items())), include_dirs)
    note(read)
    return got[0] if got else None


__all__ = [
    "Condition",
    "Enabling",
    "GuardedInclude",
    "enabling_macros",
    "guarded_includes",
    "macros_for",
    "reached_units",
    "with_reach_note",
]
