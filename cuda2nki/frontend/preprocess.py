"""Preprocessing before tree-sitter: ``pcpp`` for #if/#define/#include, with a line map back.

The result keeps one output line per line of text fed to the parser and remembers, for each, the
original file and line (from the ``#line`` markers pcpp emits).  Columns are mapped by comparing
the output line with the original line: characters in the common prefix and common suffix keep
their position; anything in between (a macro expansion) maps to the start of the difference.

Files whose only directives are ``#include <...>`` and ``#pragma`` (and no ``-D``) skip pcpp: the
text goes to the parser unchanged and the map is the identity.  Files with one-line object- and
function-like macros and ``#if``/``#ifdef``/``#elif``/``#else``/``#endif`` are expanded here line
for line (the line map stays the identity, comments are kept, so columns are exact); quoted
includes, ``#error``, ``#``/``##``, variadic macros, continuation lines and macro calls across
lines go to pcpp.

System and toolkit headers are never read (:func:`cuda2nki.frontend.headers.is_system_header`);
any other include, quoted or angle, not found on the include path is looked for in the tree
(:mod:`cuda2nki.frontend.headers`; a note says where it was found, C2N1005) and is a warning
(C2N1004) when it is nowhere.  ``__CUDACC__``, ``__NVCC__``, ``__CUDA_ARCH__`` (800), ``__cplusplus`` (C++17),
the CUDA 12 version macros and Linux's ``__linux__``/``__unix__`` are predefined (``-D``
overrides them).
``__align__(n)`` is respelled ``alignas  (n)`` (same width) because the grammar lacks it.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from cuda2nki.diagnostics import Diagnostic, Severity, SourceLoc, make
from cuda2nki.frontend.altops import has_alternatives
from cuda2nki.frontend.altops import respell as respell_alternatives
from cuda2nki.frontend.deps import note
from cuda2nki.frontend.hasinclude import header_present, replace_has_include
from cuda2nki.frontend.includes import IncludeResolver, active_only, scan_angle
from cuda2nki.frontend.sizemacros import forced_names, strip_forced

# What nvcc (CUDA 12, C++17, device pass for sm_80) and the skipped runtime headers define.
PREDEFINED = {
    "__CUDACC__": "1",
    "__NVCC__": "1",
    "__CUDA_ARCH__": "800",
    "__cplusplus": "201703L",
    "__CUDACC_VER_MAJOR__": "12",
    "__CUDACC_VER_MINOR__": "0",
    "CUDART_VERSION": "12000",
    "CUDA_VERSION": "12000",
    # the host compiler's platform (nvcc on Linux): `#if defined(__linux__) ... #else #error`
    "__linux__": "1",
    "__unix__": "1",
}

_DIRECTIVE_RE = re.compile(r"^[ \t]*#[ \t]*(\w*)(.*)$", re.M)
_HASH_RE = re.compile(r"#[ \t]*(\w*)(.*)$", re.M)  # starts with a literal: a fast scan


def _directives(text: str) -> Iterator[tuple[str, str, str]]:
    """(name, rest, whole line) of each directive line, as ``_DIRECTIVE_RE.finditer`` finds
    them, but jumping from ``#`` to ``#`` with ``str.find`` (a memchr scan) instead of trying a
    match at every position; each ``#`` starts a match of ``_HASH_RE`` (it always matches), the
    next search resumes where that match ends, as ``_HASH_RE.finditer`` would."""
    find, match = text.find, _HASH_RE.match
    pos = find("#")
    while pos >= 0:
        m = match(text, pos)
        start = text.rfind("\n", 0, pos) + 1
        if not text[start:pos].strip(" \t"):  # else a '#' after code on its line
            yield m.group(1), m.group(2), text[start : m.end()]
        pos = find("#", m.end())


_LINE_MARK_RE = re.compile(r'^#line (\d+) "(.*)"\s*$')
_ALIGN_RE = re.compile(r"\b__align__\b")
# the GNU spelling of `restrict`, which the grammar takes right after a `*` only
_GNU_RESTRICT_RE = re.compile(r"\b__restrict\b")
# the GNU `__typeof__(e)`, read as `decltype(e)` (see .stmtexpr)
_TYPEOF_RE = re.compile(r"\b__typeof(?:__)?\b")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
# attributes the grammar does not know, blanked (same width) before parsing
_BLANK_ATTR_RE = re.compile(r"\b(?:__maxnreg__|__cluster_dims__|__block_size__)\s*\([^()]*\)")


@dataclass
class LineMap:
    """Output row (0-based) -> original (file, 1-based line); columns mapped lazily."""

    default_file: str
    files: list[str] | None = None  # None: identity map
    lines: list[int] | None = None
    out_lines: list[str] | None = None
    _orig_cache: dict[str, list[str]] = field(default_factory=dict)
    _col_cache: dict[int, tuple | None] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # file -> text, when known
    exact: list[bool] = field(default_factory=list)  # row is its original line, unchanged

    def compute_exact(self) -> None:
        """Mark the rows whose text is the original line (their columns need no mapping)."""
        if self.files is None or self.lines is None or self.out_lines is None:
            return
        files, n = self.files, len(self.out_lines)
        if (
            n
            and len(files) == n
            and files.count(files[0]) == n
            and self.lines == list(range(1, n + 1))
        ):
            orig = self._orig_lines(files[0])  # line for line: row r is line r + 1
            self.exact = [a == b for a, b in zip(self.out_lines, orig)] + [False] * (n - len(orig))
            return
        out = []
        orig = []
        last: object = object()  # no file yet
        for f, ln, text in zip(self.files, self.lines, self.out_lines):
            if f is not last:  # one file's rows come in runs
                orig, last = self._orig_lines(f), f
            out.append(0 < ln <= len(orig) and orig[ln - 1] == text)
        self.exact = out

    def _orig_lines(self, file: str) -> list[str]:
        got = self._orig_cache.get(file)
        if got is None:
            text = self.sources.get(file)
            if text is None:
                try:
                    with open(file, encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                except OSError:
                    text = ""
            got = text.split("\n")
            self._orig_cache[file] = got
        return got

    def where(self, row: int) -> tuple[str, int]:
        if self.files is None or self.lines is None:
            return self.default_file, row + 1
        if 0 <= row < len(self.files):
            return self.files[row], self.lines[row]
        return self.default_file, row + 1

    def pos(self, row: int, col0: int) -> tuple[str, int, int]:
        """Map output (row, 0-based column) to the original (file, line, 1-based column)."""
        files = self.files
        if files is not None and 0 <= row < len(files):
            file, line = files[row], self.lines[row]  # type: ignore[index]
        else:
            file, line = self.default_file, row + 1
        line, col = self.point(row, col0, line)
        return file, line, col

    def point(self, row: int, col0: int, line: int) -> tuple[int, int]:
        """(line, 1-based column) in the original of output (row, 0-based column), where
        ``line`` is the row's original line (a column after a macro call that consumed lines
        is on a later line)."""
        key = self._col_cache.get(row, -1)
        if key == -1:
            key = self._col_key(row) if self.out_lines is not None else None
            self._col_cache[row] = key
        if key is None:
            return line, col0 + 1
        prefix, split, extra, shift, mid = key
        if col0 < prefix:
            return line, col0 + 1
        if col0 >= split:  # after the expansion: the (possibly later) original line
            return line + extra, col0 + shift
        return line, mid[col0 - prefix]

    def exact_row(self, row: int) -> bool:
        """True when output row ``row`` is its original line unchanged (after ``pos(row, ...)``)."""
        return self._col_cache.get(row, -1) is None

    def col(self, row: int, col0: int) -> int:
        return self.pos(row, col0)[2]

    def _col_key(self, row: int) -> tuple | None:
        """How the columns of output row ``row`` map back: None when the row is its original
        line unchanged, else ``(prefix, split, extra, shift, mid)``: columns before ``prefix``
        are unchanged, from ``split`` on they are the original line's end (``extra`` lines
        later, shifted by ``shift``), and ``mid`` holds the 1-based original column of each
        column in between (see :meth:`point`)."""
        if not (0 <= row < len(self.out_lines or ())):
            return None
        out = self.out_lines[row]
        file, line = self.where(row)
        orig_lines = self._orig_lines(file)
        if not (1 <= line <= len(orig_lines)):
            return None
        orig = orig_lines[line - 1]
        if out == orig:
            return None
        p = _common_prefix(out, orig)
        best = (_common_suffix(out, orig, p), 0, len(orig))
        # a macro call spanning lines is expanded on its first line and the lines it consumed
        # come out empty: text after the call belongs to the last consumed line
        k = 1
        while (
            row + k < len(self.out_lines)
            and self.out_lines[row + k] == ""
            and line + k <= len(orig_lines)
            and self.where(row + k)[1] == line + k
        ):
            cand = orig_lines[line + k - 1]
            sfx = _common_suffix(out, cand, p)
            if sfx > best[0]:
                best = (sfx, k, len(cand))
            k += 1
        sfx, extra, n_orig = best
        mid_end = len(orig) - sfx if extra == 0 else len(orig)
        a_mid, b_mid = out[p : len(out) - sfx], orig[p:mid_end]
        blocks: tuple[tuple[int, int, int], ...] = ()
        if _share_a_bigram(a_mid, b_mid):  # else no matching run of 2 or more: no blocks
            blocks = tuple(
                (a + p, b + p, size) for a, b, size in _matching_blocks(a_mid, b_mid) if size >= 2
            )
        split = len(out) - sfx
        return p, split, extra, n_orig - len(out) + 1, _middle_columns(p, split, blocks)


def _middle_columns(prefix: int, split: int, blocks: tuple[tuple[int, int, int], ...]) -> list[int]:
    """The original 1-based column of each output column in ``[prefix, split)``: matching runs
    (``blocks``: output start, original start, size; in order, inside the range) keep their
    place; anything else (a macro expansion) maps to where the differing text starts in the
    original (the end of the previous run, or ``prefix``)."""
    out: list[int] = []
    mapped = pos = prefix
    for a, b, size in blocks:
        out += [mapped + 1] * (a - pos)
        out += range(b + 1, b + size + 1)
        mapped, pos = b + size, a + size
    out += [mapped + 1] * (split - pos)
    return out


def _matching_blocks(a: str, b: str) -> list[tuple[int, int, int]]:
    """``difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()``, without
    its sentinel: the same blocks (same recursion on the longest match, same tie-breaking,
    adjacent blocks merged), with each longest match found by substring search."""
    found: list[tuple[int, int, int]] = []
    queue = [(0, len(a), 0, len(b))]
    while queue:
        alo, ahi, blo, bhi = queue.pop()
        i, j, k = _longest_match(a, b, alo, ahi, blo, bhi)
        if k:
            found.append((i, j, k))
            if alo < i and blo < j:
                queue.append((alo, i, blo, j))
            if i + k < ahi and j + k < bhi:
                queue.append((i + k, ahi, j + k, bhi))
    found.sort()
    merged: list[tuple[int, int, int]] = []
    i1 = j1 = k1 = 0
    for i2, j2, k2 in found:
        if i1 + k1 == i2 and j1 + k1 == j2:
            k1 += k2
        else:
            if k1:
                merged.append((i1, j1, k1))
            i1, j1, k1 = i2, j2, k2
    if k1:
        merged.append((i1, j1, k1))
    return merged


def _longest_match(a: str, b: str, alo: int, ahi: int, blo: int, bhi: int) -> tuple[int, int, int]:
    """The longest common run of ``a[alo:ahi]`` and ``b[blo:bhi]`` as ``(i, j, size)``: the
    earliest in ``a``, then in ``b``, as difflib's ``find_longest_match`` without junk;
    ``(alo, blo, 0)`` when they share no character."""
    sub = b[blo:bhi]
    besti, bestj, bestk = alo, blo, 0
    for i in range(alo, ahi):
        if ahi - i <= bestk:
            break
        k = bestk + 1  # only a longer run than the best so far can replace it
        j = sub.find(a[i : i + k])
        if j < 0:
            continue
        while i + k < ahi:
            longer = sub.find(a[i : i + k + 1])
            if longer < 0:
                break
            j, k = longer, k + 1
        besti, bestj, bestk = i, blo + j, k
    return besti, bestj, bestk


def _share_a_bigram(a: str, b: str) -> bool:
    if len(a) < 2 or len(b) < 2:
        return False
    return any(a[i : i + 2] in b for i in range(len(a) - 1))


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    if a.isascii() and b.isascii():  # one character per byte: compare as big integers
        x = int.from_bytes(a[:n].encode(), "big") ^ int.from_bytes(b[:n].encode(), "big")
        return n if not x else n - 1 - (x.bit_length() - 1) // 8
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    return p


def _common_suffix(a: str, b: str, floor: int) -> int:
    """Length of the longest common suffix of ``a`` and ``b``, at most ``min(len) - floor``."""
    n = min(len(a), len(b)) - floor if len(b) >= floor else min(len(a), len(b))
    if n <= 0:
        return 0
    if a.isascii() and b.isascii():  # the lowest differing byte of the last n bytes
        x = int.from_bytes(a[-n:].encode(), "big") ^ int.from_bytes(b[-n:].encode(), "big")
        return n if not x else ((x & -x).bit_length() - 1) // 8
    s = 0
    while s < n and a[-1 - s] == b[-1 - s]:
        s += 1
    return s


@dataclass
class Preprocessed:
    text: str
    linemap: LineMap
    diagnostics: list[Diagnostic]
    used_pcpp: bool


def _needs_pcpp(text: str) -> bool:
    for name, rest, _line in _directives(text):
        rest = rest.strip()
        if name == "pragma":
            continue
        if name == "include" and rest.startswith("<"):
            continue
        return True
    return False


_OBJ_DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:[ \t]+(.*?))?[ \t]*$")
_OBJ_DEFINE_LINES_RE = re.compile(_OBJ_DEFINE_RE.pattern, re.M)  # the same, on every line
_TOKEN_RE = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|[A-Za-z_]\w*", re.S
)


def _simple_defines(text: str, defines: Mapping[str, str]) -> dict[str, str] | None:
    """Object-like ``#define NAME value`` only (plus system includes and pragmas): the macro
    table, or None when the file needs the full preprocessor."""
    table: dict[str, str] = {}
    for name, value in defines.items():
        if not name.isidentifier():
            return None
        table[name] = value
    for name, rest, line in _directives(text):
        rest = rest.strip()
        if name == "pragma" or (name == "include" and rest.startswith("<")):
            continue
        if name != "define" or line.rstrip().endswith("\\"):
            return None
        d = _OBJ_DEFINE_RE.match(line)
        if d is None or d.group(1) in table:
            return None  # function-like (NAME( ...), malformed or redefined
        value = d.group(2) or ""
        if "/" in value:  # a comment after the value
            value = _TOKEN_RE.sub(
                lambda t: " " if t.group(0)[:2] in ("//", "/*") else t.group(0), value
            )
        table[d.group(1)] = value.strip()
    for name, value in PREDEFINED.items():
        table.setdefault(name, value)
    # expand macro bodies through each other once (C rescans; a macro never expands itself)
    done: dict[str, str] = {}

    def expand(name: str, active: frozenset[str]) -> str:
        if name in done:
            return done[name]
        body = table[name]
        if not any(w in table for w in _IDENT_RE.findall(body)):
            done[name] = body  # nothing to expand (a number, an expression of parameters...)
            return body

        def sub(t: re.Match[str]) -> str:
            w = t.group(0)
            if w in table and w not in active:
                return expand(w, active | {w})
            return w

        out = _TOKEN_RE.sub(sub, body)
        done[name] = out
        return out

    for name in list(table):
        expand(name, frozenset({name}))
    return done


def _expand_simple(text: str, filename: str, table: dict[str, str]) -> Preprocessed:
    body = _OBJ_DEFINE_LINES_RE.sub("", text)  # each #define line left empty
    used = [n for n in table if n in body]  # only the macros the code mentions
    if used:
        names = "|".join(sorted((re.escape(n) for n in used), key=len, reverse=True))
        # comments and literals are matched (and kept) so that names inside them are not
        # replaced; every alternative starts with a literal character, so the search skips to
        # the next candidate character (a leading \b would make it try every position): the
        # word boundary before a name is checked in `replace` instead
        pattern = re.compile(
            r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|(?:" + names + r")\b",
            re.S,
        )

        def replace(t: re.Match[str], text: str = body) -> str:
            word, at = t.group(0), t.start()
            if at and (text[at - 1].isalnum() or text[at - 1] == "_"):
                return word  # inside a longer name: no match of the \b form starts here
            return table.get(word, word)

        body = pattern.sub(replace, body)
    out_lines = body.split("\n")
    if _needs_respell(body):
        out_lines = [_respell(x) for x in out_lines]
    n = len(out_lines)
    lm = LineMap(
        default_file=filename,
        files=[filename] * n,
        lines=list(range(1, n + 1)),
        out_lines=out_lines,
    )
    lm.sources[filename] = text
    lm.compute_exact()
    return Preprocessed("\n".join(out_lines), lm, [], False)


def _needs_respell(text: str) -> bool:
    """Whether :func:`_respell` may change any line of ``text``."""
    return (
        "__align__" in text
        or "__maxnreg__" in text
        or "__cluster_dims__" in text
        or "__block_size__" in text
        or "__restrict" in text
        or "__typeof" in text
        or has_alternatives(text)
    )


def _respell(text: str) -> str:
    if "__align__" in text:
        text = _ALIGN_RE.sub("alignas  ", text)
    if "__restrict" in text:  # `int* const __restrict p`: the same word, of the same width
        text = _GNU_RESTRICT_RE.sub("restrict  ", text)
    if "__typeof" in text:  # the same width: `__typeof__` as `decltype  `, `__typeof` as `decltype`
        text = _TYPEOF_RE.sub(lambda m: "decltype".ljust(len(m.group(0))), text)
    if "__maxnreg__" in text or "__cluster_dims__" in text or "__block_size__" in text:
        text = _BLANK_ATTR_RE.sub(lambda m: " " * len(m.group(0)), text)
    if has_alternatives(text):  # `not x`, `a and b`: the operators they spell
        text = respell_alternatives(text)
    return text


def preprocess(
    text: str,
    filename: str,
    defines: Mapping[str, str] | None = None,
    include_dirs: Iterable[str] = (),
) -> Preprocessed:
    include_dirs = tuple(include_dirs)
    forced = forced_names() & set(defines or {})
    if forced:  # the -D values of these win over the file's own #define lines
        text = strip_forced(text, forced)
    angle = scan_angle(text, filename, include_dirs)
    if angle.needs_pcpp:  # a header of the tree included with <...>: read it
        return _pcpp_with_found_headers(text, filename, dict(defines or {}), include_dirs)
    if not defines and not _needs_pcpp(text):
        lm = LineMap(default_file=filename)
        return Preprocessed(_respell(text), lm, list(angle.missing), False)
    simple = _simple_defines(text, defines or {})
    if simple is not None:
        pre = _expand_simple(text, filename, simple)
        pre.diagnostics.extend(angle.missing)
        return pre
    lines = _conditional_macros(text, defines or {})
    if lines is not None:
        pre = _line_for_line(text, filename, lines)
        pre.diagnostics.extend(active_only(angle.missing, lines))
        return pre
    return _pcpp_with_found_headers(text, filename, dict(defines or {}), include_dirs)


def _pcpp_with_found_headers(
    text: str, filename: str, defines: dict[str, str], include_dirs: tuple[str, ...]
) -> Preprocessed:
    """pcpp with the headers found in the tree; when one of them breaks preprocessing (an
    ``#error`` for another platform, a header of the same name meant for something else), the
    file is preprocessed again without them: their includes become C2N1004 warnings and the
    errors they raised are kept as notes."""
    pre = _run_pcpp(text, filename, defines, include_dirs)
    found = {d.message for d in pre.diagnostics if d.code == "C2N1005"}
    broken = [d for d in pre.diagnostics if d.code == "C2N1003"]
    if not found or not broken:
        return pre
    plain = _run_pcpp(text, filename, defines, include_dirs, discover=False)
    if len([d for d in plain.diagnostics if d.code == "C2N1003"]) >= len(broken):
        return pre  # the found headers are not what breaks it
    why = "raised in a header found in the tree, which was then left out"
    plain.diagnostics.extend(
        dataclasses.replace(d, severity=Severity.NOTE, notes=(*d.notes, why)) for d in broken
    )
    return plain


# ---------------------------------------------------------------------- conditionals and macros
# A file whose directives are only #define (object- or function-like, one line, no # or ##),
# #undef, #if/#ifdef/#ifndef/#elif/#else/#endif with simple conditions, system includes and
# pragmas is preprocessed here, line for line (so the line map stays the identity); anything
# else (quoted includes, #error, continuation lines, macro calls across lines...) goes to pcpp.

_ARG_RE = re.compile(r"[ \t]*\(")
_FUNC_DEFINE_RE = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^()]*)\)(?:[ \t]+(.*?))?[ \t]*$"
)
_COND_TOKEN_RE = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!()~&|^]))"
)


class _Refer(Exception):  # noqa: N818 - a control-flow signal
    """Internal: this file needs the full preprocessor."""


class _Macros:
    """Macro table: name -> (parameters or None for object-like, body)."""

    def __init__(self, defines: Mapping[str, str]) -> None:
        self.table: dict[str, tuple[tuple[str, ...] | None, str]] = {
            n: (None, v) for n, v in PREDEFINED.items() if n not in defines
        }
        for name, value in defines.items():
            if not name.isidentifier():
                raise _Refer()
            self.table[name] = (None, value)

    def define(self, line: str) -> None:
        m = _FUNC_DEFINE_RE.match(line)
        if m is not None:
            params = tuple(p.strip() for p in m.group(2).split(",")) if m.group(2).strip() else ()
            if any(not p.isidentifier() for p in params):
                raise _Refer()  # variadic or malformed
            name, body = m.group(1), m.group(3) or ""
        else:
            d = _OBJ_DEFINE_RE.match(line)
            if d is None:
                raise _Refer()
            name, params, body = d.group(1), None, d.group(2) or ""
        if "#" in body:
            raise _Refer()  # stringizing or token pasting
        body = _TOKEN_RE.sub(
            lambda t: " " if t.group(0)[:2] in ("//", "/*") else t.group(0), body
        ).strip()
        if name in self.table and self.table[name] != (params, body):
            raise _Refer()  # a redefinition: pcpp reports it
        self.table[name] = (params, body)

    def expand(self, text: str, disabled: frozenset[str] = frozenset()) -> str:
        """Expand every macro in ``text`` (comments and literals are left alone)."""
        out: list[str] = []
        pos = 0
        table = self.table
        for t in _TOKEN_RE.finditer(text):
            w = t.group(0)
            if w not in table or w in disabled or t.start() < pos:
                continue
            params, body = table[w]
            end = t.end()
            if params is None:
                rep = self.expand(body, disabled | {w})
                tail = rep.rstrip()
                last = re.search(r"[A-Za-z_]\w*$", tail)
                if last and table.get(last.group(0), (None,))[0] is not None:
                    raise _Refer()  # a function-like macro name produced by an expansion
            else:
                m = _ARG_RE.match(text, end)
                if m is None:
                    if not text[end:].strip():
                        raise _Refer()  # the call may start on the next line
                    continue  # the name alone is not a call
                args, end = _call_args(text, m.end())
                if len(args) != len(params) and not (not params and args == [""]):
                    raise _Refer()
                args = [self.expand(a, disabled) for a in args]
                subst = dict(zip(params, args))
                rep = _substitute(body, subst)
                rep = self.expand(rep, disabled | {w})
            out.append(text[pos : t.start()])
            out.append(rep)
            pos = end
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)

    def condition(self, expr: str) -> bool:
        expr = re.sub(
            r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))",
            lambda m: "1" if (m.group(1) or m.group(2)) in self.table else "0",
            _TOKEN_RE.sub(lambda t: " " if t.group(0)[:2] in ("//", "/*") else t.group(0), expr),
        )
        return _CondEval(self.expand(expr)).value()


_BINARY_PREC = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}  # fmt: skip


class _CondEval:
    """An ``#if`` condition after macro expansion: integers, names (0), C operators without
    ``?:`` (which goes to pcpp)."""

    def __init__(self, text: str) -> None:
        self.toks: list[int | str] = []
        pos = 0
        while pos < len(text):
            m = _COND_TOKEN_RE.match(text, pos)
            if m is None:
                if text[pos:].strip():
                    raise _Refer()
                break
            num, ident, op = m.groups()
            if num is not None:
                octal = num[0] == "0" and num[:2] not in ("0x", "0X") and len(num) > 1
                self.toks.append(int(num, 8) if octal else int(num, 0))
            elif ident is not None:
                self.toks.append(1 if ident == "true" else 0)  # C: unknown names are 0
            else:
                self.toks.append(op)
            pos = m.end()
        self.i = 0

    def value(self) -> bool:
        v = self._binary(1)
        if self.i != len(self.toks):
            raise _Refer()
        return bool(v)

    def _next(self) -> int | str:
        if self.i >= len(self.toks):
            raise _Refer()
        t = self.toks[self.i]
        self.i += 1
        return t

    def _unary(self) -> int:
        t = self._next()
        if isinstance(t, int):
            return t
        if t == "(":
            v = self._binary(1)
            if self._next() != ")":
                raise _Refer()
            return v
        v = self._unary()
        ops = {"!": lambda: int(not v), "~": lambda: ~v, "-": lambda: -v, "+": lambda: v}
        if t not in ops:
            raise _Refer()
        return ops[t]()

    def _binary(self, floor: int) -> int:
        left = self._unary()
        while self.i < len(self.toks):
            op = self.toks[self.i]
            prec = _BINARY_PREC.get(op) if isinstance(op, str) else None
            if prec is None or prec < floor:
                break
            self.i += 1
            right = self._binary(prec + 1)
            left = _apply(op, left, right)  # type: ignore[arg-type]
        return left


def _apply(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise _Refer()
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates
        return q if op == "/" else a - q * b
    if op in ("<<", ">>") and b < 0:
        raise _Refer()
    fns = {
        "||": lambda: int(bool(a) or bool(b)), "&&": lambda: int(bool(a) and bool(b)),
        "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
        ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
        "<<": lambda: a << b, ">>": lambda: a >> b, "+": lambda: a + b, "-": lambda: a - b,
        "*": lambda: a * b,
    }  # fmt: skip
    return fns[op]()


def _substitute(body: str, subst: dict[str, str]) -> str:
    return _TOKEN_RE.sub(lambda x: subst.get(x.group(0), x.group(0)), body)


def _call_args(text: str, pos: int) -> tuple[list[str], int]:
    """The arguments of a macro call whose ``(`` ends before ``pos``: (stripped args, end)."""
    depth, start, args = 0, pos, []
    for t in re.finditer(
        r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|/\*.*?\*/|//.*|[(),]", text[pos:]
    ):
        c = t.group(0)
        if c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif c == ")" or (c == "," and not depth):
            args.append(text[start : pos + t.start()].strip())
            start = pos + t.end()
            if c == ")":
                return args, start
    raise _Refer()  # the call continues on the next line


def _conditional_macros(text: str, defines: Mapping[str, str]) -> list[str] | None:
    """The output lines (one per input line), or None when the file needs pcpp."""
    if "\\\n" in text or "??" in text:
        return None  # continuation lines, trigraphs
    try:
        macros = _Macros(defines)
        lines = text.split("\n")
        out: list[str] = []
        # (this group is active, a branch was taken, the enclosing group is active)
        stack: list[tuple[bool, bool, bool]] = []
        active = True
        in_comment = False
        for line in lines:
            d = _DIRECTIVE_RE.match(line) if not in_comment else None
            if in_comment and "*/" not in line:
                out.append(line if active else "")
            elif d is None:
                out.append(macros.expand(line) if active else "")
            else:
                active = _directive(macros, d.group(1), d.group(2), line, stack, active)
                keep = d.group(1) == "pragma" or d.group(1) == "include"
                out.append(macros.expand(line) if keep and active else "")
            in_comment = _ends_in_comment(line, in_comment)
        if stack:
            return None  # unterminated #if: pcpp reports it
        return out
    except _Refer:
        return None


def _directive(macros: _Macros, name: str, rest: str, line: str, stack: list, active: bool) -> bool:
    rest = rest.strip()
    if name in ("if", "ifdef", "ifndef"):
        if not active:
            stack.append((False, True, False))
            return False
        if name == "if":
            on = macros.condition(rest)
        else:
            word = rest.split("//")[0].split("/*")[0].strip()
            if not word.isidentifier():
                raise _Refer()
            on = (word in macros.table) == (name == "ifdef")
        stack.append((on, on, True))
        return on
    if name in ("elif", "else", "endif"):
        if not stack:
            raise _Refer()
        _, taken, outer = stack.pop()
        if name == "endif":
            return outer
        on = outer and not taken and (name == "else" or macros.condition(rest))
        stack.append((on, taken or on, outer))
        return on
    if not active:
        return False
    if name == "define":
        macros.define(line)
    elif name == "undef":
        macros.table.pop(rest.split("//")[0].split("/*")[0].strip(), None)
    elif not (name == "pragma" or (name == "include" and rest.startswith("<"))):
        raise _Refer()
    return True


def _ends_in_comment(line: str, in_comment: bool) -> bool:
    """Is a ``/* ...`` block comment still open at the end of ``line``?"""
    if in_comment:
        j = line.find("*/")
        if j < 0:
            return True
        line = line[j + 2 :]
    if "/*" not in line:
        return False
    # complete comments, literals and line comments out of the way, an opening /* remains
    return "/*" in _TOKEN_RE.sub(" ", line)


def _line_for_line(text: str, filename: str, lines: list[str]) -> Preprocessed:
    out_lines = [_respell(x) for x in lines]
    n = len(out_lines)
    lm = LineMap(
        default_file=filename,
        files=[filename] * n,
        lines=list(range(1, n + 1)),
        out_lines=out_lines,
    )
    lm.sources[filename] = text
    lm.compute_exact()
    return Preprocessed("\n".join(out_lines), lm, [], False)


def _run_pcpp(
    text: str,
    filename: str,
    defines: dict[str, str],
    include_dirs: tuple[str, ...],
    discover: bool = True,
) -> Preprocessed:
    import pcpp  # deferred: pcpp builds its lexer on import

    diags: list[Diagnostic] = []
    resolver = IncludeResolver(
        filename, text, lambda p: _display_path(p, filename), diags, discover=discover
    )

    forced = forced_names() & set(defines)

    class _Pre(pcpp.Preprocessor):
        def define(self, tokens):  # noqa: ANN001
            # a directive's #define of a macro whose -D value wins is left out
            if not isinstance(tokens, str) and forced and _first_name(tokens) in forced:
                return None
            return super().define(tokens)

        def undef(self, tokens):  # noqa: ANN001
            if forced and _first_name(tokens) in forced:
                return None
            return super().undef(tokens)

        def on_error(self, file, line, msg):  # noqa: ANN001
            diags.append(
                make("C2N1003", SourceLoc(file or filename, int(line or 0), 1), reason=msg)
            )
            self.return_code += 1

        def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):  # noqa: ANN001
            if not is_malformed:
                found = resolver.resolve(includepath, self.lastdirective)
                if found is not None:
                    return found  # pcpp reads the header from there
            raise pcpp.OutputDirective(pcpp.Action.IgnoreAndPassThrough)

        def evalexpr(self, tokens):  # noqa: ANN001
            def make_int(like: object, value: bool) -> object:
                return _int_token(like, value, self.t_INTEGER, self.t_INTEGER_TYPE)

            return super().evalexpr(replace_has_include(tokens, self._present, make_int))

        def _present(self, spelled: str) -> bool:
            includer = self.source if isinstance(self.source, str) else filename
            return header_present(spelled, includer or filename, self.path)

        def on_file_open(self, is_system_include, includepath):  # noqa: ANN001
            # headers in other encodings (Latin-1 comments) are read, not refused
            fh = open(includepath, encoding="utf-8", errors="replace")  # noqa: SIM115
            note([includepath])  # a result depends on the headers it includes
            if fh.read(1) != "\ufeff":
                fh.seek(0)
            return fh

        def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):  # noqa: ANN001
            if directive.value == "error":
                msg = "".join(t.value for t in toks).strip()
                loc = SourceLoc(directive.source or filename, directive.lineno, 1)
                diags.append(make("C2N1003", loc, reason=f"#error {msg}"))
                return True
            if directive.value == "warning":
                return True
            return None

    pre = _Pre()
    pre.line_directive = "#line"
    for name, value in PREDEFINED.items():
        if name not in defines:
            pre.define(f"{name} {value}")
    for name, value in defines.items():
        pre.define(f"{name} {value}" if value != "" else f"{name}")
    base = os.path.dirname(os.path.abspath(filename)) if filename else os.getcwd()
    for d in (*include_dirs, base):
        pre.add_path(d)
    try:
        pre.parse(text, filename)
        out = io.StringIO()
        pre.write(out)
    except Exception as exc:  # noqa: BLE001 - pcpp raises assorted errors on malformed input
        diags.append(
            make("C2N1003", SourceLoc(filename, 1, 1), reason=f"{type(exc).__name__}: {exc}")
        )
        return Preprocessed(_respell(text), LineMap(default_file=filename), diags, False)
    return _build(out.getvalue(), filename, text, diags)


def _int_token(like: object, value: bool, kind: str, spell: type) -> object:
    """A pcpp integer token (1 or 0) in place of the token ``like``."""
    tok = copy.copy(like)
    tok.type = kind
    tok.value = spell("1L" if value else "0L")
    return tok


def _first_name(tokens: object) -> str | None:
    """The macro name a ``#define``/``#undef`` directive's tokens start with."""
    for t in tokens if isinstance(tokens, list | tuple) else ():
        value = getattr(t, "value", None)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _display_path(path: str, main: str) -> str:
    """The main file keeps its given name; headers are shown relative to the working directory
    when below it, absolute otherwise."""
    full = os.path.abspath(path)
    if full == os.path.abspath(main):
        return main
    rel = os.path.relpath(full)
    return full if rel.startswith("..") else rel


def _build(result: str, filename: str, original: str, diags: list[Diagnostic]) -> Preprocessed:
    files: list[str] = []
    lines: list[int] = []
    out_lines: list[str] = []
    cur_file, cur_line = filename, 1
    for raw in result.split("\n"):
        stripped = raw.lstrip()
        if stripped.startswith("#"):
            m = _LINE_MARK_RE.match(stripped)
            if m:
                cur_line, cur_file = int(m.group(1)), m.group(2)
                cur_file = _display_path(cur_file, filename)
                files.append(cur_file)
                lines.append(cur_line)
                out_lines.append("")
                continue
            if not re.match(r"#\s*pragma\b", stripped):
                raw = ""  # a passed-through #include <...> or unknown directive
        files.append(cur_file)
        lines.append(cur_line)
        out_lines.append(raw)
        cur_line += 1
    out_lines = [_respell(x) for x in out_lines]
    lm = LineMap(default_file=filename, files=files, lines=lines, out_lines=out_lines)
    lm.sources[filename] = original
    lm.compute_exact()
    return Preprocessed("\n".join(out_lines), lm, diags, True)
