"""Checks of a file sized by macros, at smaller values of them (see
:mod:`cuda2nki.frontend.sizemacros`).

The port written keeps the source's sizes; the port checked is made again from the file
preprocessed with the smaller values (they win over the file's own ``#define`` lines), with the
binding inferred from that preprocessing, and the check runs the CUDA kernel the same way.  A
port made from a sidecar binding is checked as it is (its sizes are the sidecar's).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cuda2nki.diagnostics import DiagnosticError, SourceLoc, make

if TYPE_CHECKING:
    from cuda2nki.batch.job import JobSpec, _Pending


def smaller_sizes(spec: JobSpec, literal: bool = False, tu: Any = None) -> dict[str, str]:
    """The file's size macros that are too large to simulate, with the check's values
    (name -> ``-D`` value); empty when there are none (or the file cannot be read).
    ``literal``: for a literal (thread-by-thread) port, whose simulation issues instructions
    per CUDA block: values under one partition tile.  ``tu``: the file as parsed for porting
    (its launches at the source's sizes)."""
    from cuda2nki.fileio import read_text
    from cuda2nki.frontend.sizesteps import check_sizes

    try:
        text = read_text(spec.path, source=True)
        defines = dict(spec.defines)
        return check_sizes(spec.path, text, spec.include_dirs, defines, small=literal, tu=tu)
    except (OSError, UnicodeDecodeError, DiagnosticError):
        return {}


def pending_at(
    spec: JobSpec, pending: _Pending, small: Mapping[str, str], rec: dict[str, Any]
) -> _Pending:
    """``pending`` with its port made again at the ``small`` sizes (in a folder of its own, see
    :func:`discard`) and the binding inferred there, a C2N4032 note in ``rec``; ``pending``
    itself where its binding is a sidecar's or the smaller port cannot be made."""
    from cuda2nki import api
    from cuda2nki.batch.job import _inferred
    from cuda2nki.frontend.sizemacros import defines_win

    if rec.get("binding") != "inferred":
        return pending
    if rec.get("status") == "literal":
        small = smaller_sizes(spec, literal=True) or small
    defines = {**dict(spec.defines), **dict(small)}
    try:
        with defines_win(small):
            res = api.port(
                spec.path,
                kernel=pending.name,
                api=spec.target,
                defines=defines,
                include_dirs=spec.include_dirs,
            )
            if res.source is None:
                return pending
            binding, _notes = _inferred(spec, res.tu, pending.name)
    except DiagnosticError:
        return pending
    if binding is None:
        return pending
    folder = Path(tempfile.mkdtemp(prefix="c2n-sizes-"))
    port = folder / pending.port.name
    api.write_atomic(port, res.source)
    _note(spec, small, rec)
    return replace(pending, port=port, binding=binding, sizes=dict(small))


def discard(pending: _Pending) -> None:
    """Remove the folder of a port made by :func:`pending_at`."""
    if pending.sizes and pending.port.parent.name.startswith("c2n-sizes-"):
        shutil.rmtree(pending.port.parent, ignore_errors=True)


def _note(spec: JobSpec, small: Mapping[str, str], rec: dict[str, Any]) -> None:
    from cuda2nki.batch.job import record
    from cuda2nki.fileio import read_text
    from cuda2nki.frontend.sizemacros import effective_values

    try:
        was = effective_values(
            list(small),
            spec.path,
            read_text(spec.path, source=True),
            spec.include_dirs,
            dict(spec.defines),
        )
    except (OSError, UnicodeDecodeError):
        was = {}
    d = make(
        "C2N4032",
        SourceLoc(spec.path, 1, 1),
        defines=" ".join(f"-D {n}={v}" for n, v in small.items()),
        was=", ".join(f"{n} = {was.get(n, '?')}" for n in small),
    )
    rec["diagnostics"] = [*rec["diagnostics"], *record(spec, "", "", [d], lines=0)["diagnostics"]]


def extra_points(binding: Any, sizes: Mapping[str, str] | None) -> bool:
    """Whether the check adds generated test points: not where every size of the binding is a
    host value taken from a size macro the check chose (the host's launch grid, computed from
    the same macros, covers those sizes only; the chosen values are the ragged, several-tile
    points already)."""
    from cuda2nki.fidelity.inputs import _shape_scalars
    from cuda2nki.frontend.sizemacros import _int_value

    if not sizes or binding is None:
        return True
    chosen = {_int_value(v) for v in sizes.values()}
    values = {s.name: s.value for s in binding.scalars}
    dims = _shape_scalars(binding)
    return not dims or any(values.get(d) not in chosen for d in dims)
