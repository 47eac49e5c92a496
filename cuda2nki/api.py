"""The public Python API: what the command line calls, and what notebooks and pytest can use.

``parse`` reads CUDA, ``run`` executes a kernel in the SIMT interpreter, ``simulate`` runs an NKI
kernel in the simulator, ``lift``/``port`` draft an NKI port, ``check``/``review``
judge a port against its CUDA kernel.  Every function raises :class:`DiagnosticError` on bad input.
The heavy packages are imported on first use so that ``import cuda2nki`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cuda2nki.binding import (
    Binding,
    BindingFile,
    Number,
    binding_from_dict,
    generate_inputs,
    load_binding,
    load_bindings,
)
from cuda2nki.diagnostics import Diagnostic
from cuda2nki.fileio import read_text, write_atomic
from cuda2nki.frontend.ast import TranslationUnit
from cuda2nki.frontend.select import select_kernel

__all__ = [
    "Binding",
    "BindingFile",
    "LiftSummary",
    "binding_from_dict",
    "check",
    "find_binding",
    "lift",
    "load_binding",
    "load_bindings",
    "parse",
    "port",
    "run",
    "run_full",
    "select_kernel",
    "simulate",
    "write_atomic",
]


# --------------------------------------------------------------------------- front end / SIMT


def parse(
    path: str | Path,
    *,
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    templates: Mapping[str, str] | None = None,
) -> TranslationUnit:
    """Read a CUDA file into the typed AST (kernels, device functions, launch sites, diagnostics)."""
    from cuda2nki import frontend

    text = read_text(path)
    return frontend.parse_source(
        text,
        str(path),
        defines=dict(defines or {}),
        include_dirs=tuple(include_dirs),
        templates=dict(templates or {}),
    )


def find_binding(
    cuda_path: str | Path, explicit: str | Path | None = None, kernel: str | None = None
) -> Binding | None:
    """The binding of ``kernel`` given explicitly (C2N0007 if that file binds other kernels only),
    else the sidecar ``<stem>.toml``'s binding of it, else None.  Without ``kernel``, the file's
    only binding."""
    if explicit is not None:
        return load_binding(explicit, kernel)
    sidecar = Path(cuda_path).with_suffix(".toml")
    if not sidecar.is_file():
        return None
    bf = load_bindings(sidecar)
    return bf.for_kernel(kernel) if kernel is not None else bf.only()


@dataclass(frozen=True)
class RunResult:
    """A SIMT run: every out/inout parameter by name, the launch used, and the interpreter's
    warnings and statistics (``simt``: a :class:`cuda2nki.simt.SimtResult`)."""

    kernel: str
    outputs: dict[str, np.ndarray]
    resolved: Any
    simt: Any


def run_full(
    path: str | Path,
    binding: Binding,
    *,
    kernel: str | None = None,
    overrides: Mapping[str, Number] | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    templates: Mapping[str, str] | None = None,
    poison_shared: bool = True,
    max_steps: int | None = None,
    fmad: bool = False,
) -> RunResult:
    """Run a CUDA kernel in the SIMT interpreter, keeping its warnings and statistics."""
    from cuda2nki import simt

    tu = parse(path, defines=defines, include_dirs=include_dirs, templates=templates)
    name = select_kernel(tu, kernel, binding)
    resolved = binding.resolve(overrides)
    arrays = generate_inputs(resolved, seed, inputs)
    result = simt.run_kernel_full(
        tu,
        name,
        grid=resolved.grid,
        block=resolved.block,
        shared_bytes=resolved.shared_bytes,
        args={**resolved.scalars, **arrays},
        poison_shared=poison_shared,
        max_steps=max_steps,
        fmad=fmad,
    )
    outputs = {
        t.name: np.asarray(result.outputs[t.name]).reshape(resolved.shapes[t.name])
        for t in binding.tensors
        if t.role != "in"
    }
    return RunResult(name, outputs, resolved, result)


def run(path: str | Path, binding: Binding, **options: Any) -> dict[str, np.ndarray]:
    """Run a CUDA kernel in the SIMT interpreter; returns every out/inout parameter by name
    (options as :func:`run_full`)."""
    return run_full(path, binding, **options).outputs


# --------------------------------------------------------------------------- porting


@dataclass(frozen=True)
class LiftSummary:
    claimed: bool
    idiom: str | None
    literal_possible: bool
    diagnostics: tuple[Diagnostic, ...]
    intent: Any = None


def lift(tu: TranslationUnit, kernel: str, *, binding: Binding | None = None) -> LiftSummary:
    """What the lifter makes of a kernel (no code generated): the census of ``migrate --examine``."""
    from cuda2nki import lift as _lift
    from cuda2nki.frontend.pointers import fix_unit
    from cuda2nki.frontend.presence import null_tested, specialise_unit

    fn = tu.function(kernel)
    if fn is not None and kernel not in tu.rejected:  # as the port sees it: inputs present,
        tu = fix_unit(specialise_unit(tu, kernel, null_tested(fn), ()), kernel)  # fixed pointers
    res = _lift.lift_kernel(tu, kernel, binding)
    claimed = bool(getattr(res, "claimed", False))
    return LiftSummary(
        claimed=claimed,
        idiom=getattr(res, "idiom", None) if claimed else None,
        literal_possible=bool(getattr(res, "literal_possible", True)),
        diagnostics=tuple(getattr(res, "diagnostics", ())),
        intent=getattr(res, "kernel_ir", None),
    )


def port(
    path: str | Path,
    *,
    binding: Binding | str | Path | None = None,
    kernel: str | None = None,
    target: str = "nki",
    passes: str | None = None,
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    emit: str = "nki",
    lowering: str = "auto",
) -> Any:
    """Draft an NKI port of a kernel in a CUDA file; returns a
    :class:`cuda2nki.codegen.pipeline.PortResult` (``source`` is None when refused).

    The binding is ``binding``, else the sidecar ``.toml`` beside the file, else inferred.
    ``lowering``: ``auto`` (an idiom recogniser, else the literal thread-by-thread lowering),
    ``literal`` (force the literal lowering) or ``recognise`` (never literal: refuse instead).
    """
    from cuda2nki.codegen import pipeline

    return pipeline.port_file(
        path,
        binding=binding,
        kernel=kernel,
        target=target,
        passes=passes,
        defines=dict(defines or {}),
        include_dirs=tuple(include_dirs),
        emit=emit,
        lowering=lowering,
    )


# --------------------------------------------------------------------------- NKI side / review


def simulate(
    port_path: str | Path,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    *,
    kernel: str | None = None,
    target: str = "trn2",
    profile: bool = False,
) -> Any:
    """Run an NKI kernel from a port file in the simulator (in this process)."""
    from cuda2nki import nkisim

    fn = nkisim.load_kernel(str(port_path), kernel)
    return nkisim.simulate_kernel(fn, inputs, target=target, profile=profile)


def check(cuda_path: str | Path, port_path: str | Path, **options: Any) -> Any:
    """Judge a port against its CUDA kernel (see :mod:`cuda2nki.fidelity`)."""
    from cuda2nki.fidelity.check import check as _check

    return _check(cuda_path, port_path, **options)
