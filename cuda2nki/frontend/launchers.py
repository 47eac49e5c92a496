"""Launches in other files: a kernel defined in a header and launched from a source file that
includes it (directly or through other headers).

A header such as ``kernels/gemm.cuh`` often holds kernels only; the launches, with their grid,
block and arguments, are in a runner ``.cu`` of the same tree.  When a header's kernel has no
launch in its own file, the source files near it that include it are parsed and their launch
sites of that kernel are added to the header's translation unit, so that binding inference sees
the same host evidence (cited ``runner.cu:LINE``) as for a kernel launched where it is defined.
A template kernel the header cannot instantiate itself (``template <int BM> __global__ ...``)
takes the instantiation of the including file's launch (``kernel<64><<<...>>>``), and a kernel
file refused alone for names its includer defines (``#include "kernel.cu"`` after ``#define
real float``) takes the includer's lowering of it: this is the one mechanism by which a file is
read as the file including it sees it, see :mod:`cuda2nki.frontend.adopt`.

A kernel compiled at run time (NVRTC) or loaded from a cubin has no includer: the source files
that load it by name (``cuModuleGetFunction(&f, module, "kernel")``) and launch it with
``cuLaunchKernel`` give its launch sites (see :mod:`cuda2nki.frontend.apilaunch`).

"Near" is, for a header, the header's directory, else the one above it (a ``src/kernels/*.cuh``
included by ``src/runner.cu``); for a source file, its own directory and, when no file there
includes it, the one above (``kernel/span_kernel.cu`` included by ``main.cu``).  Directories are
searched recursively up to :data:`MAX_FILES` files; hidden directories are skipped.  Includes are
matched by file name (``#include "kernels/gemm.cuh"`` includes any ``gemm.cuh``), which is what a
tree's include paths resolve to in all but contrived layouts, unless the written include names
another existing file relative to the including one (``#include "kernels.h"`` in
``app1/main.cu`` is ``app1/kernels.h``, not the ``kernels.h`` of the program beside it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path

from cuda2nki.fileio import unix_lines
from cuda2nki.frontend.ast import TranslationUnit
from cuda2nki.frontend.deps import note, note_listing, recording

HEADER_SUFFIXES = frozenset({".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl"})
SOURCE_SUFFIXES = frozenset({".cu", ".cpp", ".cc", ".cxx", ".c"})
#: files looked at when searching for the files that include a header
MAX_FILES = 2000
#: a file larger than this is not read for its includes
_MAX_BYTES = 2_000_000
#: folder levels above a file's own searched for the files that include it, the first two
#: always, the others only within the tree being migrated or the repository holding the file
LEVELS_UP = 3
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)


#: files whose includers are being parsed (a file including its includer must not loop)
_ACTIVE: set[str] = set()
_DEPTH = [0]  # > 0 while a file is parsed on behalf of a file it includes


@contextlib.contextmanager
def no_includer_search() -> Iterator[None]:
    """Within: no file looks for the files that include it (a file parsed on behalf of
    another one is read as written, not searched around in turn)."""
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1


def for_an_included_file() -> bool:
    """Whether the file being parsed is read on behalf of a file it includes."""
    return _DEPTH[0] > 0


def with_foreign_launches(
    tu: TranslationUnit,
    defines: Mapping[str, str] | None = None,
    include_dirs: Iterable[str] = (),
) -> TranslationUnit:
    """``tu`` with the launch sites, found in the files that include it, of each of its kernels
    that it does not launch itself, and its code as the including file sees it where it does not
    stand alone (see :mod:`cuda2nki.frontend.adopt`); ``tu`` unchanged when no file of the tree
    includes it or it needs nothing from them."""
    from cuda2nki.frontend.adopt import adopt_context, needs_context
    from cuda2nki.frontend.reach import reached_units, with_reach_note

    path = Path(tu.file)
    launched = {s.instance or s.kernel for s in tu.launch_sites} | {
        s.kernel for s in tu.launch_sites
    }
    missing = ({k.name for k in tu.kernels} | set(tu.rejected)) - launched
    troubled = needs_context(tu)
    if not missing and not troubled:
        return tu
    if _DEPTH[0] or not path.is_file() or tu.file in _ACTIVE:
        return tu
    real = path.resolve()
    found = _includers(real)
    found += [p for p in module_loaders(real.parent, missing) if p not in found and p != real]
    if missing and not found:  # compiled apart: a file that sees the kernel's declaration
        from cuda2nki.frontend.launchfiles import launching_files

        found += launching_files(real, missing)
    sources = tuple((str(p), _stamp(p)) for p in found if _stamp(p)[1] >= 0)
    if not sources:
        return tu
    note(p for p, _ in sources)  # the result depends on the files read for it
    _ACTIVE.add(tu.file)
    try:
        units, read = _foreign_units(
            sources, tuple(sorted((defines or {}).items())), tuple(map(str, include_dirs))
        )
        note(read)  # the headers they include (noted even when their parse is reused)
        # an includer reaching the file only in one configuration is read in that one
        dirs = tuple(map(str, include_dirs))
        units, reached = reached_units(real, units, defines, dirs, tuple(tu.rejected))
    finally:
        _ACTIVE.discard(tu.file)
    extra = tuple(
        s
        for u in units
        for s in u.launch_sites
        if (s.instance or s.kernel) in missing or s.kernel in missing
    )
    if extra:
        tu = dataclasses.replace(tu, launch_sites=tu.launch_sites + extra)
    tu = adopt_context(tu, units) if troubled else tu
    return with_reach_note(tu, reached)


@lru_cache(maxsize=64)
def _foreign_units(
    sources: tuple[tuple[str, tuple[int, int]], ...],
    defines: tuple[tuple[str, str], ...],
    include_dirs: tuple[str, ...],
) -> tuple[tuple[TranslationUnit, ...], tuple[str, ...]]:
    """The translation units of ``sources`` (paths with their stamps, so that an edited file is
    read again), each parsed once per process, and the other files read for them (see
    :mod:`cuda2nki.frontend.deps`); an unreadable file is left out."""
    with recording() as read:
        units = _parse_all(sources, defines, include_dirs)
    return units, tuple(sorted(read))


def _parse_all(
    sources: tuple[tuple[str, tuple[int, int]], ...],
    defines: tuple[tuple[str, str], ...],
    include_dirs: tuple[str, ...],
) -> tuple[TranslationUnit, ...]:
    from cuda2nki.frontend import parse_source

    units: list[TranslationUnit] = []
    for name, _ in sources:
        src = Path(name)
        try:
            # a stray Latin-1 byte in an includer's comment must not hide its context
            text = unix_lines(src.read_bytes().decode("utf-8", errors="replace"))
        except OSError:
            continue
        with no_includer_search():  # read as written; its own includers are not searched
            units.append(
                parse_source(text, str(src), defines=dict(defines), include_dirs=include_dirs)
            )
    return tuple(units)


def _includers(real: Path) -> list[Path]:
    """The source files that include ``real`` (a resolved path), looked for where it is usually
    included from: a header from its directory, else the one above (``src/kernels/*.cuh`` from
    ``src/runner.cu``); a kernel source file (``#include "kernel.cu"``) from a main file beside
    it, else from the directory above unless that is a top-level one (``/``, ``/tmp``)."""
    if real.suffix.lower() in HEADER_SUFFIXES:  # its own program first, then the folder above
        here = [p for p in including_sources(real, real.parent) if p != real]
        here = here or [p for p in including_sources(real) if p != real]
        return here or _from_further_up(real, search_roots(real)[2:])
    roots = [real.parent]
    above = real.parent.parent
    if len(above.parts) > 2 and above != real.parent:
        roots.append(above)
    return _from_further_up(real, [*roots, *search_roots(real)[2:]])


def _from_further_up(real: Path, roots: list[Path]) -> list[Path]:
    """The source files including ``real`` under the first of ``roots`` that has any, each
    after those including it in turn."""
    for root in roots:
        found = [p for p in including_sources(real, root) if p != real]
        if found:
            return _outer_first(found, root, {real})
    return []


def search_roots(real: Path) -> list[Path]:
    """The folders searched, in turn, for the files that include ``real``: its own, the one
    above, then (up to :data:`LEVELS_UP` levels above its own) those still inside the tree
    being migrated or the repository holding it, never a top-level folder (``/tmp``)."""
    from cuda2nki.frontend.headers import search_root, tree_root

    inside = Path(search_root(str(real.parent), tree_root()))
    roots = [real.parent, real.parent.parent]
    d = real.parent.parent
    while len(roots) <= LEVELS_UP and d != inside and d.is_relative_to(inside):
        d = d.parent
        if len(d.parts) <= 2:
            break
        roots.append(d)
    return roots


def _outer_first(found: list[Path], root: Path, seen: set[Path]) -> list[Path]:
    """``found`` with, before each, the source files under ``root`` that include it in turn
    (``main.cu`` includes ``work.cu``, which includes ``solver.cu``): the outermost file of such
    a chain sees the typedefs and macros the inner ones use, so it comes first."""
    out: list[Path] = []
    for p in found:
        if p in seen:
            continue
        seen.add(p)
        outer = [q for q in including_sources(p, root) if q not in seen and q not in found]
        out.extend(q for q in _outer_first(outer, root, seen) if q not in out)
        if p not in out:
            out.append(p)
    return out


def module_loaders(root: Path, kernels: Iterable[str]) -> list[Path]:
    """The source files under ``root`` that load one of ``kernels`` by name with the driver API
    (``cuModuleGetFunction(&f, module, "kernel")``, a kernel compiled with NVRTC or loaded
    from a cubin), sorted."""
    names = [re.escape(k) for k in kernels if k]
    if not names:
        return []
    wanted = re.compile(r'"(?:' + "|".join(names) + r')"')
    out = []
    for p in _candidates(root):
        if p.suffix.lower() not in SOURCE_SUFFIXES:
            continue
        text = _text_at(str(p), _stamp(p))
        if "cuModuleGetFunction" in text and wanted.search(text):
            out.append(p)
    return out


@lru_cache(maxsize=8192)
def _text_at(path: str, stamp: tuple[int, int]) -> str:
    if stamp[1] < 0 or stamp[1] > _MAX_BYTES:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def including_sources(header: Path, root: Path | None = None) -> list[Path]:
    """The source files (not headers) under ``root`` (default: the directory above the
    header's) that include ``header``, directly or through other headers, sorted."""
    root = root if root is not None else header.parent.parent
    includes = {p: _include_texts(p) for p in _candidates(root)}
    targets, frontier = {header}, [header]
    users: set[Path] = set()
    while frontier:
        target = frontier.pop()
        for p, texts in includes.items():
            if p not in users and any(_names(p, t, target) for t in texts):
                users.add(p)
                if p.suffix.lower() in HEADER_SUFFIXES and p not in targets:
                    targets.add(p)
                    frontier.append(p)
    return sorted(p for p in users if p.suffix.lower() in SOURCE_SUFFIXES)


def _names(p: Path, written: str, target: Path) -> bool:
    """Whether ``#include "written"`` in ``p`` may be ``target``: the same file name, and not
    another file found beside ``p`` (``#include "kernels.h"`` in ``app1/main.cu`` is
    ``app1/kernels.h``, never ``app2/kernels.h``); an include found nowhere near is resolved
    through include paths, matched by name."""
    if Path(written).name != target.name:
        return False
    near = p.parent / written
    try:
        return not near.is_file() or near.resolve() == target.resolve()
    except OSError:
        return True


def _candidates(root: Path) -> list[Path]:
    note_listing(root)  # a result searching here depends on which files are here
    out: list[Path] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            seen += 1
            if seen > MAX_FILES:
                return out
            p = Path(dirpath) / f
            if p.suffix.lower() in HEADER_SUFFIXES | SOURCE_SUFFIXES and p.is_file():
                out.append(p)  # a regular file (a FIFO named x.cu would block the read)
    return out


def _stamp(p: Path) -> tuple[int, int]:
    """(modification time, size) of a regular file; size -1 for anything else (a FIFO, a
    device: opening one could block forever) or a file that cannot be read."""
    try:
        st = p.stat()
    except OSError:
        return (0, -1)
    if not stat.S_ISREG(st.st_mode):
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


def _includes(p: Path) -> frozenset[str]:
    """The file names ``p`` includes (read once per process while the file is unchanged)."""
    return frozenset(Path(m).name for m in _include_texts(p))


def _include_texts(p: Path) -> frozenset[str]:
    """The includes of ``p`` as written (``kernels/gemm.cuh``)."""
    return _includes_at(str(p), _stamp(p))


@lru_cache(maxsize=8192)
def _includes_at(path: str, stamp: tuple[int, int]) -> frozenset[str]:
    if stamp[1] < 0 or stamp[1] > _MAX_BYTES:
        return frozenset()
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(_INCLUDE.findall(text))
