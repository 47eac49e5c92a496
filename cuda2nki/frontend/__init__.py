"""CUDA front end: preprocess (pcpp), parse (tree-sitter-cuda), lower to the typed AST.

Entry points::

    parse_source(text, filename, *, defines=None, include_dirs=(), templates=None) -> TranslationUnit
    parse_file(path, *, defines=None, include_dirs=(), templates=None) -> TranslationUnit

Bad input never raises: problems are :class:`~cuda2nki.diagnostics.Diagnostic` in
``TranslationUnit.diagnostics``; a kernel the front end cannot accept is listed in
``TranslationUnit.rejected`` (name -> its diagnostics) and is absent from ``functions``.
``parse_file`` raises :class:`~cuda2nki.diagnostics.DiagnosticError` (C2N0001) only when the file
itself cannot be read.  See :mod:`cuda2nki.frontend.ast` for the AST contract.

Modules: ``preprocess`` (pcpp, object-like macro fast path, line map), ``cst`` (cached
tree-sitter language/parser), ``driver`` (file scope: functions, templates, launch sites,
recovery of kernels inside syntax errors, call graph), ``unit`` (per-file tables, function
lowering, template instantiation, overloads), ``lower`` / ``coop`` / ``constfold`` (function
bodies, cooperative groups, constant folding), ``typesys`` / ``intrinsics`` / ``constants`` (C
types and conversions, CUDA intrinsics' result types, header constants), ``nodekinds`` (the
disposition of every grammar node kind), ``visit`` (``walk``/``find`` over the AST), ``dump``
(indented AST dump and the ``cuda2nki parse`` JSON summary).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Mapping

from cuda2nki.diagnostics import SourceLoc, make
from cuda2nki.frontend.ast import TranslationUnit


def parse_source(
    text: str,
    filename: str,
    *,
    defines: Mapping[str, str] | None = None,
    include_dirs: Iterable[str | os.PathLike] = (),
    templates: Mapping[str, str] | None = None,
) -> TranslationUnit:
    """Lower CUDA source ``text`` (named ``filename`` in diagnostics) to a TranslationUnit.

    A kernel of a header that the header does not launch gets the launches of the source files
    near it that include it (:mod:`cuda2nki.frontend.launchers`); a template kernel that nothing
    instantiates is then instantiated with assumed arguments, said in a note
    (:mod:`cuda2nki.frontend.assumedinst`).  Inside
    :func:`cuda2nki.frontend.remember.remembering_parses`, the same parse is done once."""
    from cuda2nki.frontend.remember import parse_key, remembered

    dirs = tuple(map(str, include_dirs))
    return remembered(
        lambda: parse_key(text, str(filename), defines, dirs, templates),
        lambda: _parse_source(text, filename, defines, dirs, templates),
    )


def _parse_source(
    text: str,
    filename: str,
    defines: Mapping[str, str] | None,
    dirs: tuple[str, ...],
    templates: Mapping[str, str] | None,
) -> TranslationUnit:
    from cuda2nki.frontend.assumedinst import ASSUMED_INTS, assumed_kernels, with_assumed
    from cuda2nki.frontend.launchers import for_an_included_file

    tu = _parse(text, str(filename), defines, dirs, templates)
    # each kernel nothing instantiates: the first assumed integer it is accepted under (not in
    # a file read for a file it includes, which takes its real instantiations only)
    tries = {} if for_an_included_file() else dict.fromkeys(assumed_kernels(tu), 0)
    while tries:
        ints = {k: ASSUMED_INTS[i] for k, i in tries.items()}
        got = _parse(text, str(filename), defines, dirs, with_assumed(templates, ints))
        refused = {k for k in tries if k in got.rejected}
        if not refused:
            return got
        tries = {k: i + (k in refused) for k, i in tries.items()}
        tries = {k: i for k, i in tries.items() if i < len(ASSUMED_INTS)}
    return tu


def _parse(
    text: str,
    filename: str,
    defines: Mapping[str, str] | None,
    dirs: tuple[str, ...],
    templates: Mapping[str, str] | None,
) -> TranslationUnit:
    from cuda2nki.frontend.arrayparams import flat_array_params
    from cuda2nki.frontend.constparams import tables_as_parameters
    from cuda2nki.frontend.conststructs import const_structs_as_parameters
    from cuda2nki.frontend.deviceparams import device_globals_as_parameters
    from cuda2nki.frontend.driver import lower_source
    from cuda2nki.frontend.launchers import with_foreign_launches
    from cuda2nki.frontend.linkage import link, with_notes
    from cuda2nki.frontend.linkage import notes as link_notes
    from cuda2nki.frontend.surface import surfaces_as_arrays
    from cuda2nki.frontend.texture import textures_as_inputs
    from cuda2nki.frontend.vecoperators import resolve_vector_operators
    from cuda2nki.frontend.vecparams import vector_params_as_tensors

    # The lowering allocates many small acyclic objects; the cyclic collector would only re-scan
    # them (about a tenth of the time), so it is paused for one file and resumed afterwards.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        tu = lower_source(text, str(filename), defines, dirs, templates)
        linked = link(text, str(filename), tu.diagnostics)  # device functions of other files
        if linked is not None:
            tu = lower_source(linked[0], str(filename), defines, dirs, templates)
            tu = with_notes(tu, link_notes(linked[1], str(filename)))
        # host-filled __constant__ tables: inputs of the kernels that read them
        tu = tables_as_parameters(tu, text)
        tu = const_structs_as_parameters(tu, text)  # and constant structs of buffers
        # __device__ / __managed__ variables: memory of the kernels that use them
        tu = device_globals_as_parameters(tu)
        # texture objects: input arrays read through their host-set mode
        tu = textures_as_inputs(tu, text)
        # surface objects: arrays read and written at byte coordinates
        tu = surfaces_as_arrays(tu, text)
        # `float w[6][5][5]` parameters: flat pointers with linearised accesses
        tu = flat_array_params(tu)
        tu = resolve_vector_operators(tu)  # `a + b` of float2: the file's operator+, or lanes
        tu = vector_params_as_tensors(tu)  # a float2 taken by value: a tensor of its lanes
    except RecursionError:
        d = make("C2N1010", SourceLoc(str(filename), 1, 1), what="nesting too deep")
        return TranslationUnit(file=str(filename), functions=(), diagnostics=(d,))
    except Exception as exc:  # noqa: BLE001 - a front-end bug must not stop a batch run
        if os.environ.get("CUDA2NKI_DEBUG"):
            raise
        d = make(
            "C2N0005",
            SourceLoc(str(filename), 1, 1),
            reason=f"front end: {type(exc).__name__}: {exc}",
        )
        return TranslationUnit(file=str(filename), functions=(), diagnostics=(d,))
    finally:
        if gc_was_enabled:
            gc.enable()
    # a header's kernels launched from the files that include it, and a file's code as the
    # file including it sees it (see frontend.launchers and frontend.adopt)
    return with_foreign_launches(tu, defines, dirs)


def parse_file(
    path: str | os.PathLike,
    *,
    defines: Mapping[str, str] | None = None,
    include_dirs: Iterable[str | os.PathLike] = (),
    templates: Mapping[str, str] | None = None,
) -> TranslationUnit:
    """Read ``path`` (UTF-8) and lower it; C2N0001 if it cannot be read."""
    from cuda2nki.fileio import read_text

    text = read_text(path, source=True)
    return parse_source(
        text, str(path), defines=defines, include_dirs=include_dirs, templates=templates
    )


__all__ = ["parse_source", "parse_file", "TranslationUnit"]
