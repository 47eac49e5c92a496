"""Sizes given by object-like macros (``#define N 4096``), and smaller values for checking.

A kernel sized by macros has its sizes as numbers once preprocessed: the port and the CUDA
kernel both run at the source's (production) sizes, too large to simulate.  A check preprocesses
the file again with smaller ``-D`` values for the macros that are sizes, and those values win
over the file's own ``#define`` lines (:func:`defines_win`).

A macro is a size by its uses, in the file and the headers it includes: an allocation or copy
size (``cudaMalloc(&p, N * N * sizeof(float))``), a bound compared against (``i < N``), a stride
or extent inside brackets (``a[i * N + j]``, ``float h[N]``).  A macro that shapes the launch's
blocks (``dim3 block(BX, BY)``, ``<<<g, BLOCK>>>``), a ``__shared__`` array or scales a block
index (``blockIdx.x * TILE``) is a tile and keeps its value, as does anything not an integer
(``alpha``).  A macro defined from others (``#define NN (N * N)``, ``#define _PB_N BOUND(N, n)``)
counts as a use of those.  A macro the user defines with ``-D`` keeps the user's value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_FORCED: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("cuda2nki_forced_macros", default=())


@contextmanager
def defines_win(values: Mapping[str, str]) -> Iterator[None]:
    """While active, the ``-D`` value of each macro of ``values`` (name -> the value the check
    chose) wins over the source's own ``#define`` and ``#undef`` of it (in the file and in its
    headers)."""
    token = _FORCED.set(tuple({**dict(_FORCED.get()), **values}.items()))
    try:
        yield
    finally:
        _FORCED.reset(token)


def forced_names() -> frozenset[str]:
    """The macro names whose ``-D`` value wins (see :func:`defines_win`)."""
    return frozenset(n for n, _ in _FORCED.get())


def forced_sizes() -> frozenset[int]:
    """The integer values the check chose for size macros (see :func:`defines_win`): a host
    size equal to one of them came from such a macro and is small already."""
    out = set()
    for _, v in _FORCED.get():
        n = _int_value(v)
        if n is not None:
            out.add(n)
    return frozenset(out)


_DEFINE_LINE_RE = re.compile(r"^[ \t]*#[ \t]*(?:define|undef)[ \t]+([A-Za-z_]\w*)(?![\w(])", re.M)


def strip_forced(text: str, names: frozenset[str]) -> str:
    """``text`` with each ``#define``/``#undef`` of ``names`` left an empty line (the line count
    is kept, so locations do not move)."""
    if not names or "#" not in text:
        return text
    out = []
    for line in text.split("\n"):
        m = _DEFINE_LINE_RE.match(line)
        out.append("" if m is not None and m.group(1) in names else line)
    return "\n".join(out)


# --------------------------------------------------------------------------- finding the sizes


@dataclass(frozen=True)
class SizeMacro:
    """An object-like macro used as a size: its name, its value in the source (the largest of
    its definitions) and where it is defined."""

    name: str
    value: int
    file: str
    line: int


_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRING_RE = re.compile(r"\"(?:\\.|[^\"\\\n])*\"")
_OBJ_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?!\()[ \t]*(.*)$")
_FUNC_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)[ \t]*(.*)$")
_INCLUDE_RE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"", re.M)
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_INT_EXPR_RE = re.compile(r"^[\d\s()+\-*/<>%xXa-fA-FuUlL]+$")


def _clean(text: str) -> str:
    """``text`` without comments (kept as spaces: lines stay) and string literals."""
    text = _COMMENT_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return _STRING_RE.sub('""', text)


def _int_value(body: str) -> int | None:
    """The value of a macro body that is an integer expression of literals, else None."""
    body = body.strip()
    if not body or not _INT_EXPR_RE.match(body) or not re.search(r"\d", body):
        return None
    expr = re.sub(r"(?<=[0-9a-fA-F])[uUlL]+\b", "", body).replace("/", "//")
    if re.search(r"[a-zA-Z]", re.sub(r"0[xX][0-9a-fA-F]+", "0", expr)):
        return None  # letters other than a hex literal's
    try:
        value = eval(expr, {"__builtins__": {}}, {})  # noqa: S307 - digits and operators only
    except Exception:  # noqa: BLE001 - not an expression after all
        return None
    return value if isinstance(value, int) else None


def _headers(path: str, text: str, include_dirs: Sequence[str], seen: set[str]) -> list[str]:
    """The quoted includes of ``text`` (a file at ``path``) that exist, recursively."""
    from cuda2nki.frontend.headers import find_header

    out: list[str] = []
    for spelled in _INCLUDE_RE.findall(_clean_keep_strings(text)):
        found = None
        for base in (os.path.dirname(os.path.abspath(path)), *include_dirs):
            cand = os.path.normpath(os.path.join(base, spelled))
            if os.path.isfile(cand):
                found = cand
                break
        if found is None:
            hit = find_header(spelled, path)
            found = hit.path if hit is not None else None
        if found is None or os.path.realpath(found) in seen:
            continue
        seen.add(os.path.realpath(found))
        out.append(found)
        try:
            with open(found, encoding="utf-8", errors="replace") as f:
                sub = f.read()
        except OSError:
            continue
        out.extend(_headers(found, sub, include_dirs, seen))
    return out


def _clean_keep_strings(text: str) -> str:
    return _COMMENT_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _definitions(
    files: Sequence[tuple[str, str]],
) -> tuple[dict[str, SizeMacro], dict[str, set[str]], list[str]]:
    """Integer macros (name -> the largest definition), every other macro's referenced names,
    and the code lines (directives left out) of every file."""
    ints: dict[str, SizeMacro] = {}
    refs: dict[str, set[str]] = {}
    code: list[str] = []
    for path, text in files:
        lines = _clean(text).split("\n")
        for no, line in enumerate(lines, 1):
            f = _FUNC_RE.match(line)
            o = _OBJ_RE.match(line) if f is None else None
            if f is not None:
                params = set(_IDENT_RE.findall(f.group(2)))
                refs.setdefault(f.group(1), set()).update(
                    n for n in _IDENT_RE.findall(f.group(3)) if n not in params
                )
            elif o is not None:
                value = _int_value(o.group(2))
                if value is None:
                    refs.setdefault(o.group(1), set()).update(_IDENT_RE.findall(o.group(2)))
                elif o.group(1) not in ints or ints[o.group(1)].value < value:
                    ints[o.group(1)] = SizeMacro(o.group(1), value, path, no)
            elif not line.lstrip().startswith("#"):
                code.append(line)
    return ints, refs, code


def _bases(name: str, ints: Mapping[str, SizeMacro], refs: Mapping[str, set[str]]) -> set[str]:
    """The integer macros ``name`` stands for (itself, or those its definition uses)."""
    out: set[str] = set()
    todo, seen = [name], set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in ints:
            out.add(n)
        todo.extend(refs.get(n, ()))
    return out


_ALLOC_RE = re.compile(
    r"\b(?:cudaMalloc\w*|cudaMemcpy\w*|cudaMemset\w*|malloc|calloc|realloc|new\b[^;]*?\[)"
)
_SHARED_RE = re.compile(r"__shared__[^;]*;")
_DIM3_RE = re.compile(r"\bdim3\s+(\w+)\s*(?:=\s*dim3\s*)?[({]([^;]*)[;]")
_LAUNCH_RE = re.compile(r"<<<([^;]*?)>>>")
_BOUNDS_RE = re.compile(r"__launch_bounds__\s*\(([^)]*)\)")


def _words(text: str) -> set[str]:
    return set(_IDENT_RE.findall(text))


def _launch_blocks(code: str) -> set[str]:
    """The names in the block shape of each launch (``<<<grid, block>>>``), through a ``dim3``
    variable of the file."""
    dims = {m.group(1): m.group(2) for m in _DIM3_RE.finditer(code)}
    out: set[str] = set()
    for m in _LAUNCH_RE.finditer(code):
        args = _split_top(m.group(1))
        if len(args) < 2:
            continue
        block = args[1].strip()
        out |= _words(dims.get(block, block))
    for m in _BOUNDS_RE.finditer(code):
        out |= _words(m.group(1))
    return out


def _split_top(text: str) -> list[str]:
    """``text`` split at its top-level commas."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _tile_uses(code: str) -> set[str]:
    """Names that shape blocks: a launch's block, ``__shared__`` extents, a scale of a block
    index (``blockIdx.x * T``, ``T * blockIdx.y``)."""
    out = _launch_blocks(code)
    for m in _SHARED_RE.finditer(code):
        out |= _words(" ".join(re.findall(r"\[([^\]]*)\]", m.group(0))))
    out |= set(re.findall(r"\bblock(?:Idx|Dim)\s*\.\s*[xyz]\s*\*\s*\(?\s*([A-Za-z_]\w*)", code))
    out |= set(re.findall(r"\b([A-Za-z_]\w*)\s*\)?\s*\*\s*block(?:Idx|Dim)\b", code))
    return out


def _size_uses(code: str) -> set[str]:
    """Names used as sizes: in an allocation or copy statement, compared against as a bound,
    or inside brackets (an index stride, an array extent)."""
    out: set[str] = set()
    for stmt in code.split(";"):
        if _ALLOC_RE.search(stmt):
            out |= _words(stmt)
    out |= set(re.findall(r"<=?\s*\(?\s*([A-Za-z_]\w*)", code))
    out |= set(re.findall(r"\b([A-Za-z_]\w*)\s*\)?\s*>=?(?![>=])", code))
    for inner in re.findall(r"\[([^\[\]]*)\]", code):
        out |= _words(inner)
    return out


def size_macros(
    path: str, text: str, include_dirs: Sequence[str] = (), defines: Mapping[str, str] = ()
) -> list[SizeMacro]:
    """The integer macros of ``text`` (the file at ``path``) and the headers it includes that
    are sizes by their uses (see the module's docstring), the user's ``defines`` left out."""
    defines = dict(defines or {})
    seen = {os.path.realpath(path)}
    files = [(path, text)]
    for h in _headers(path, text, include_dirs, seen):
        try:
            with open(h, encoding="utf-8", errors="replace") as f:
                files.append((h, f.read()))
        except OSError:
            continue
    ints, refs, lines = _definitions(files)
    if not ints:
        return []
    code = "\n".join(lines)
    # a use of a derived macro is a use of the integer macros it stands for
    expand = {n: _bases(n, ints, refs) for n in (*ints, *refs)}

    def based(names: set[str]) -> set[str]:
        return set().union(*(expand.get(n, set()) for n in names)) if names else set()

    tiles = based(_tile_uses(code) & set(expand))
    sizes = based(_size_uses(code) & set(expand))
    keep = sizes - tiles
    return [ints[n] for n in sorted(keep) if ints[n].value > 1 and n not in defines]


#: the check's values of size macros, in the order of their names: each past one partition tile
#: (128) with a ragged tail, ragged for blocks of 8, 16 and 32 too, and distinct (a transposed
#: index shows)
CHECK_SIZES = (131, 141, 151, 161, 171, 181, 191, 201)
#: the same where three or more size macros multiply in one allocation (a 3-D volume)
CHECK_SIZES_3D = (37, 41, 45, 49, 53, 57, 61, 65)


def check_values(
    macros: Sequence[SizeMacro],
    path: str,
    text: str,
    include_dirs: Sequence[str] = (),
    defines: Mapping[str, str] | None = None,
    small: bool = False,
) -> dict[str, str]:
    """Smaller values for ``macros`` (name -> ``-D`` value): distinct, ragged, over one tile
    where the data allows (``small``: under one tile, for a port that simulates every CUDA
    block); a macro whose value in effect (preprocessed with ``defines``) is already at most
    its check value keeps it (it is left out)."""
    if not macros:
        return {}
    table = CHECK_SIZES_3D if small or _volume(macros, text) else CHECK_SIZES
    now = effective_values([m.name for m in macros], path, text, include_dirs, defines)
    out: dict[str, str] = {}
    for i, m in enumerate(macros):
        want = table[i % len(table)] + 2 * (i // len(table))
        if now.get(m.name, 0) > want:
            out[m.name] = str(want)
    return out


_PROBE = "__cuda2nki_size_"


def effective_values(
    names: Sequence[str],
    path: str,
    text: str,
    include_dirs: Sequence[str] = (),
    defines: Mapping[str, str] | None = None,
) -> dict[str, int]:
    """The integer value each of ``names`` has at the end of the file, preprocessed as the port
    is (a name without one is left out)."""
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.frontend.preprocess import preprocess

    probes = "".join(f"\nint {_PROBE}{n} = ({n});" for n in names)
    try:
        pre = preprocess(text + probes + "\n", path, defines or {}, include_dirs)
    except DiagnosticError:
        return {}
    out: dict[str, int] = {}
    for m in re.finditer(rf"\bint {_PROBE}(\w+) = (.*?);", pre.text):
        value = _int_value(m.group(2))
        if value is not None:
            out[m.group(1)] = value
    return out


def _volume(macros: Sequence[SizeMacro], text: str) -> bool:
    """Whether three size macros (or one three times) multiply in one allocation of ``text``."""
    names = {m.name for m in macros}
    for stmt in _clean(text).split(";"):
        if _ALLOC_RE.search(stmt):
            used = [w for w in _IDENT_RE.findall(stmt) if w in names]
            if len(used) >= 3:
                return True
    return False
