"""Kernels of a file that another source file includes, lowered in that file's context.

Many projects keep kernels in a file of their own (``kernel.cu``, ``srad_kernel.cu``) that is
not compiled alone: a source file defines the macros, typedefs and structs it needs
(``#define fp float``, ``struct Node {...}``) and then ``#include``s it.  Parsed alone, such a
file's kernels use undeclared names.  When every error of a refused kernel is such a name
(C2N1020 undeclared identifier, C2N1021 unknown function, C2N1022 unknown type) and a source
file near it includes the file (see :func:`cuda2nki.frontend.launchers.including_sources`), the including file is lowered
and the kernel is taken from there: its locations still point into the kernel's own file, and
the includer's definitions are the ones the kernel is compiled with.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from cuda2nki.frontend.ast import Function, TranslationUnit

#: the diagnostics that a missing definition from an including file explains
CONTEXT_CODES = frozenset({"C2N1020", "C2N1021", "C2N1022"})
_DEPTH = [0]  # > 0 while another file is lowered for its launches or as an includer


@contextlib.contextmanager
def no_includer_search() -> Iterator[None]:
    """Within: no file looks for the files that include it (a file parsed on behalf of
    another one is not searched around in turn)."""
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1


def _roots(target: Path) -> list[Path]:
    """Where includers are looked for: the file's directory, then the one above it unless that
    is a top-level directory (``/``, ``/tmp``, ``/home``)."""
    roots = [target.parent]
    above = target.parent.parent
    if len(above.parts) > 2 and above != target.parent:
        roots.append(above)
    return roots


def _needs_context(tu: TranslationUnit) -> set[str]:
    """Names of the refused kernels whose every error is a missing definition."""
    out = set()
    for name, diags in tu.rejected.items():
        errors = [d for d in diags if str(d.severity) == "error"]
        if errors and all(d.code in CONTEXT_CODES for d in errors):
            out.add(name)
    return out


def _same_file(loc_file: str, includer: Path, target: Path) -> bool:
    p = Path(loc_file)
    cand = p if p.is_absolute() else includer.parent / p
    try:
        return os.path.samefile(cand, target)
    except OSError:
        return p.name == target.name


def with_includer_context(
    tu: TranslationUnit,
    defines: Mapping[str, str] | None = None,
    include_dirs: Iterable[str] = (),
) -> TranslationUnit:
    """``tu`` with each kernel refused for a missing definition replaced by its lowering in a
    source file that includes ``tu``'s file, where that lowering is accepted."""
    path = Path(tu.file)
    wanted = _needs_context(tu)
    if not wanted or _DEPTH[0] or not path.is_file():
        return tu
    from cuda2nki.frontend import parse_source
    from cuda2nki.frontend.launchers import including_sources

    target = path.resolve()
    found: dict[str, Function] = {}
    helpers: dict[str, Function] = {}
    sites = []
    sources: list[Path] = []
    for root in _roots(target):
        sources = [p for p in including_sources(target, root) if p != target]
        if sources:
            break
    for src in sources:
        try:
            text = src.read_text(encoding="utf-8")
        except (OSError, ValueError):
            continue
        with no_includer_search():
            other = parse_source(
                text, str(src), defines=defines, include_dirs=(str(src.parent), *include_dirs)
            )
        for f in other.functions:
            if f.kind == "global" and f.name in wanted and f.name not in found:
                if _same_file(f.loc.file, src, target):
                    found[f.name] = f
                    sites.extend(s for s in other.launch_sites if s.kernel == f.name)
            elif f.kind != "global":
                helpers.setdefault(f.name, f)
        if wanted <= found.keys():
            break
    if not found:
        return tu
    have = {f.name for f in tu.functions}
    extra = [f for f in helpers.values() if f.name not in have]
    rejected = {k: v for k, v in tu.rejected.items() if k not in found}
    kept = {d for v in rejected.values() for d in v}
    dropped = {d for k in found for d in tu.rejected[k]}
    diags = tuple(d for d in tu.diagnostics if d not in dropped or d in kept)
    return dataclasses.replace(
        tu,
        functions=tu.functions + tuple(extra) + tuple(found.values()),
        launch_sites=tu.launch_sites + tuple(sites),
        diagnostics=diags,
        rejected=rejected,
    )
