"""Device functions defined in another source file of the tree (separate compilation).

A file may declare a device function and call it, its definition living in another ``.cu``
of the same program (``nvcc -rdc``, or host-and-device helpers compiled once)::

    __host__ __device__ double integral(double);          // main.cu
    __global__ void k(double* y) { y[i] = integral(y[i]); }

    __host__ __device__ double integral(double x) {...}   // integral.cu, next to it

When the lowering reports such a call (C2N1021) and the file declares the function, the source
files next to it are searched for a definition (not a kernel), then, when the file belongs to
the tree being migrated, the other source files of that tree that name the function, nearest
directory first (see :func:`tree_sources`).  The definitions found, with the
functions they call from their own files, the ``#define`` lines and file-scope constants they
use, are appended to the file under ``#line`` markers (so diagnostics point into their own
files) and the file is lowered again; a note (C2N1007) says where each came from."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import tree_sitter as ts

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend.deps import note, note_listing

#: the extensions of source files searched for definitions
SOURCE_EXTS = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp")
_MAX_FILES = 64  # a directory with more source files than this is not searched
_MAX_BYTES = 2_000_000
_UNKNOWN_RE = re.compile(r"call to unknown function '([A-Za-z_]\w*)'")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_MAIN_RE = re.compile(r"\bmain\s*\(\s*(?:void\s*)?(?:int\b[^)]*)?\)\s*\{")
_DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)


@dataclass(frozen=True)
class Chunk:
    """Text taken from another file: where it starts (1-based line) and what it defines."""

    file: str
    line: int
    text: str
    name: str  # the function defined ('' for a #define or a constant)


def unknown_callees(diags: Iterable[Diagnostic]) -> set[str]:
    """The names of the functions the lowering reported as unknown (C2N1021)."""
    out = set()
    for d in diags:
        if d.code == "C2N1021":
            m = _UNKNOWN_RE.search(d.message)
            if m:
                out.add(m.group(1))
    return out


def _declarator_name(node: ts.Node | None) -> str | None:
    while node is not None and node.type not in ("identifier", "field_identifier"):
        if node.type in ("qualified_identifier", "operator_name", "destructor_name"):
            return None
        node = node.child_by_field_name("declarator")
    return None if node is None else (node.text or b"").decode()


def _function_declarator(node: ts.Node | None) -> ts.Node | None:
    while node is not None and node.type != "function_declarator":
        node = node.child_by_field_name("declarator")
    return node


def _top_level(root: ts.Node) -> list[ts.Node]:
    """The file-scope nodes, looking into ``extern "C" {...}`` and namespaces."""
    out: list[ts.Node] = []
    stack = list(reversed(root.named_children))
    while stack:
        n = stack.pop()
        if n.type in ("linkage_specification", "namespace_definition"):
            body = n.child_by_field_name("body")
            if body is not None and body.type == "declaration_list":
                stack.extend(reversed(body.named_children))
            elif body is not None:  # `extern "C" double f(...) {...}`
                stack.append(body)
            continue
        out.append(n)
    return out


def declared_functions(root: ts.Node) -> set[str]:
    """The functions a file declares (prototypes) at file scope."""
    out = set()
    for n in _top_level(root):
        if n.type != "declaration":
            continue
        for d in n.children_by_field_name("declarator"):
            fd = _function_declarator(d)
            name = _declarator_name(fd) if fd is not None else None
            if name:
                out.add(name)
    return out


@dataclass
class _Source:
    path: str
    text: str
    root: ts.Node
    functions: dict[str, ts.Node]  # non-kernel definitions by name
    constants: dict[str, ts.Node]  # file-scope variable declarations by name
    defines: dict[str, int]  # macro name -> line (0-based) of its #define


def _read(path: str) -> _Source | None:
    from cuda2nki.frontend.cst import parse_bytes

    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    root = parse_bytes(text.encode("utf-8")).root_node
    functions: dict[str, ts.Node] = {}
    constants: dict[str, ts.Node] = {}
    for n in _top_level(root):
        if n.type == "function_definition":
            if b"__global__" in (n.text or b"").split(b"(")[0]:
                continue  # a kernel is never linked in
            name = _declarator_name(n.child_by_field_name("declarator"))
            if name:
                functions.setdefault(name, n)
        elif n.type == "declaration":
            for d in n.children_by_field_name("declarator"):
                if _function_declarator(d) is None:
                    name = _declarator_name(d)
                    if name:
                        constants.setdefault(name, n)
    defines = {m.group(1): text.count("\n", 0, m.start()) for m in _DEFINE_RE.finditer(text)}
    return _Source(path, text, root, functions, constants, defines)


def sibling_sources(filename: str) -> list[str]:
    """The other source files in the directory of ``filename`` (sorted; none when there are
    too many to search)."""
    d = os.path.dirname(os.path.abspath(filename))
    me = os.path.abspath(filename)
    note_listing(d)  # a definition added here may change the result
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return []
    out = [
        os.path.join(d, n)
        for n in names
        if n.endswith(SOURCE_EXTS)
        and os.path.join(d, n) != me
        and os.path.isfile(os.path.join(d, n))
    ]
    return out if len(out) <= _MAX_FILES else []


def tree_sources(filename: str, wanted: set[str]) -> list[str]:
    """The source files of the migrated tree holding ``filename`` (see
    :func:`cuda2nki.frontend.headers.searching_tree`) outside its own directory whose text names
    one of ``wanted``: those under the directory above the file's, else under the one above
    that, and so on up to the tree's root (the first level holding any), nearest directory first
    (the fewest steps up and down from the file's directory), then by path.  A file with its own
    ``main`` is another program's and is left out; each level looks at no more than
    :data:`~cuda2nki.frontend.launchers.MAX_FILES` files."""
    from cuda2nki.frontend.headers import tree_root

    root, me = tree_root(), Path(os.path.realpath(filename))
    if root is None or Path(root) not in me.parents or not wanted:
        return []
    names = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(wanted))) + r")\b")
    here = me.parent.parts

    def distance(p: Path) -> int:
        there = p.parent.parts
        return len(here) + len(there) - 2 * len(os.path.commonprefix([here, there]))

    level = me.parent
    while level != Path(root):
        level = level.parent
        found = _naming(level, me.parent, names)
        if found:
            return [str(p) for p in sorted(found, key=lambda p: (distance(p), str(p)))]
    return []


def _naming(root: Path, skip: Path, names: re.Pattern[str]) -> list[Path]:
    """The source files under ``root``, not in the directory ``skip``, whose text matches
    ``names`` and defines no ``main``."""
    from cuda2nki.frontend.launchers import _candidates, _stamp, _text_at

    out = []
    for p in _candidates(root):
        if p.parent == skip or not p.name.endswith(SOURCE_EXTS):
            continue
        text = _text_at(str(p), _stamp(p))
        if names.search(text) and not _MAIN_RE.search(text):
            out.append(p)
    return out


def _define_text(src: _Source, line: int) -> str:
    lines = src.text.split("\n")
    out = [lines[line]]
    while out[-1].rstrip().endswith("\\") and line + len(out) < len(lines):
        out.append(lines[line + len(out)])
    return "\n".join(out)


def find_definitions(wanted: set[str], known: set[str], files: list[str]) -> list[Chunk]:
    """The definitions of ``wanted`` in ``files`` and what they need from their own files
    (functions not in ``known``, #defines, file-scope constants), in an order that compiles:
    macros and constants first, then functions callee-first as they appear."""
    sources: list[_Source] = []
    for f in files:
        s = _read(f)
        if s is not None and (s.functions or s.defines):
            sources.append(s)
    chunks: list[Chunk] = []
    taken: set[tuple[str, str]] = set()
    todo = list(sorted(wanted))
    have = set(known)
    while todo:
        name = todo.pop()
        if name in have:
            continue
        src = next((s for s in sources if name in s.functions), None)
        if src is None:
            continue
        have.add(name)
        node = src.functions[name]
        body = (node.text or b"").decode()
        chunks.append(Chunk(src.path, node.start_point[0] + 1, body, name))
        for word in sorted(set(_IDENT_RE.findall(body)) - {name}):
            if word in src.functions and word not in have:
                todo.append(word)
            elif word not in have:
                _support(src, word, chunks, taken)
                if word not in src.functions and any(word in s.functions for s in sources):
                    todo.append(word)
    # macros and constants first (their own order), then the functions
    support = [c for c in chunks if not c.name]
    support.sort(key=lambda c: (c.file, c.line))
    funcs = [c for c in chunks if c.name]
    return support + funcs


def _support(src: _Source, word: str, chunks: list[Chunk], taken: set[tuple[str, str]]) -> None:
    """The #define or file-scope constant named ``word`` in ``src``, once."""
    if (src.path, word) in taken:
        return
    if word in src.defines:
        taken.add((src.path, word))
        line = src.defines[word]
        chunks.append(Chunk(src.path, line + 1, _define_text(src, line), ""))
    elif word in src.constants:
        taken.add((src.path, word))
        node = src.constants[word]
        chunks.append(Chunk(src.path, node.start_point[0] + 1, (node.text or b"").decode(), ""))


def appended(text: str, chunks: list[Chunk]) -> str:
    """``text`` with each chunk appended under a ``#line`` marker naming its file."""
    parts = [text.rstrip("\n")]
    for c in chunks:
        parts.append(f'#line {c.line} "{c.file}"\n{c.text}')
    return "\n".join(parts) + "\n"


def notes(chunks: list[Chunk], filename: str) -> list[Diagnostic]:
    from cuda2nki.diagnostics import SourceLoc

    return [
        make("C2N1007", SourceLoc(c.file, c.line, 1), name=c.name, file=filename)
        for c in chunks
        if c.name
    ]


def link(text: str, filename: str, diags: Iterable[Diagnostic]) -> tuple[str, list[Chunk]] | None:
    """``text`` with the definitions of the device functions it declares and calls but does
    not define appended (see the module), else None when none is found."""
    from cuda2nki.frontend.cst import parse_bytes

    missing = unknown_callees(diags)
    if not missing:
        return None
    root = parse_bytes(text.encode("utf-8", "replace")).root_node
    declared = declared_functions(root) & missing
    if not declared:
        return None
    defined = {
        _declarator_name(n.child_by_field_name("declarator")) or ""
        for n in _top_level(root)
        if n.type == "function_definition"
    }
    files = sibling_sources(filename)
    chunks = find_definitions(declared, defined, files)
    elsewhere = declared - {c.name for c in chunks}
    if elsewhere:  # not all beside the file: the rest of the tree, nearest first
        files += tree_sources(filename, elsewhere)
        chunks = find_definitions(declared, defined, files)
    if not any(c.name for c in chunks):
        return None
    note(c.file for c in chunks)  # the result depends on those files
    return appended(text, chunks), chunks


def with_notes(tu: object, extra: list[Diagnostic]) -> object:
    """``tu`` with the notes ``extra`` added to its diagnostics."""
    import dataclasses

    return dataclasses.replace(tu, diagnostics=(*tu.diagnostics, *extra))  # type: ignore[attr-defined,type-var]
