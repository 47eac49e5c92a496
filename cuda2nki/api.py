"""The public Python API: what the command line calls, and what notebooks and pytest can use.

``parse`` reads CUDA, ``run`` executes a kernel in the SIMT interpreter, ``simulate`` runs an NKI
kernel in the simulator, ``lift``/``port`` draft an NKI port, ``check``/``review``
judge a port against its CUDA kernel.  Every function raises :class:`DiagnosticError` on bad input.
The heavy packages are imported on first use so that ``import cuda2nki`` stays cheap.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

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
from cuda2nki.diagnostics import Diagnostic, DiagnosticError
from cuda2nki.fileio import read_text, write_atomic
from cuda2nki.frontend.ast import TranslationUnit
from cuda2nki.frontend.select import select_kernel

if TYPE_CHECKING:
    from cuda2nki.fidelity.check import CheckReport
    from cuda2nki.nkisim import SimResult
    from cuda2nki.pipeline import PortResult

#: the Trainium generations the simulator and the checker model
Hardware = Literal["trn1", "trn2", "trn3"]
#: the NKI API a port is written against (``nki``: the current ``nki.language``/``nki.isa``)
NkiApi = Literal["nki", "legacy"]

__all__ = [
    "Binding",
    "BindingFile",
    "Hardware",
    "LiftSummary",
    "NkiApi",
    "Review",
    "binding_from_dict",
    "check",
    "find_binding",
    "lift",
    "load_binding",
    "load_bindings",
    "parse",
    "port",
    "review",
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

    text = read_text(path, source=True)
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


def run(
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
) -> dict[str, np.ndarray]:
    """Run a CUDA kernel in the SIMT interpreter; returns every out/inout parameter by name
    (:func:`run_full` keeps the launch, warnings and statistics too)."""
    return run_full(
        path,
        binding,
        kernel=kernel,
        overrides=overrides,
        inputs=inputs,
        seed=seed,
        defines=defines,
        include_dirs=include_dirs,
        templates=templates,
        poison_shared=poison_shared,
        max_steps=max_steps,
        fmad=fmad,
    ).outputs


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
    api: NkiApi = "nki",
    passes: str | None = None,
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    emit: Literal["ast", "intent", "tiles", "nki"] = "nki",
    lowering: Literal["auto", "literal", "recognise"] = "auto",
    target: str | None = None,
    templates: Mapping[str, str] | None = None,
) -> PortResult:
    """Draft an NKI port of a kernel in a CUDA file; returns a
    :class:`cuda2nki.pipeline.PortResult` (``source`` is None when refused).

    The binding is ``binding``, else the sidecar ``.toml`` beside the file, else inferred.
    ``api``: the NKI API the port is written against (``nki`` or ``legacy``).
    ``lowering``: ``auto`` (an idiom recogniser, else the literal thread-by-thread lowering),
    ``literal`` (force the literal lowering) or ``recognise`` (never literal: refuse instead).
    ``target`` is the former name of ``api`` (deprecated).  ``templates``: template arguments
    (``NAME -> VALUE``) for a template kernel that no launch site instantiates.
    """
    from cuda2nki import pipeline

    if target is not None:
        warnings.warn(
            "port(target=...) is deprecated; use api='nki' or api='legacy'",
            DeprecationWarning,
            stacklevel=2,
        )
        api = target  # type: ignore[assignment]
    return pipeline.port_file(
        path,
        binding=binding,
        kernel=kernel,
        target=api,
        passes=passes,
        defines=dict(defines or {}),
        include_dirs=tuple(include_dirs),
        emit=emit,
        lowering=lowering,
        templates=dict(templates or {}),
    )


# --------------------------------------------------------------------------- NKI side / review


def simulate(
    port_path: str | Path,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    *,
    kernel: str | None = None,
    hw: Hardware = "trn2",
    profile: bool = False,
    target: str | None = None,
) -> SimResult:
    """Run an NKI kernel from a port file in the simulator (in this process) on the Trainium
    generation ``hw``.  ``target`` is the former name of ``hw`` (deprecated)."""
    from cuda2nki import nkisim

    if target is not None:
        warnings.warn("simulate(target=...) is deprecated; use hw=", DeprecationWarning, 2)
        hw = target  # type: ignore[assignment]
    fn = nkisim.load_kernel(str(port_path), kernel)
    return nkisim.simulate_kernel(fn, inputs, target=hw, profile=profile)


def check(
    cuda_path: str | Path,
    port_path: str | Path,
    *,
    binding: Binding | str | Path | None = None,
    kernel: str | None = None,
    port_kernel: str | None = None,
    seeds: int = 5,
    overrides: Mapping[str, Number] | None = None,
    binds: Mapping[str, str] | None = None,
    static_only: bool = False,
    hw: Hardware = "trn2",
    timeout: float = 120.0,
    memory_mb: int | None = 4096,
    ignore: Sequence[str] = (),
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    trust: bool = False,
    sandbox: Any = None,
    templates: Mapping[str, str] | None = None,
    extra_points: bool = True,
) -> CheckReport:
    """Judge a port against its CUDA kernel (see :mod:`cuda2nki.fidelity`).

    The port runs on ``seeds`` generated inputs per test point, in a sandbox limited to
    ``timeout`` seconds and ``memory_mb`` MB, on the simulated ``hw``; ``static_only`` reads its
    text only (the verdict is then ``unverified``).  ``binds`` maps CUDA parameter names onto the
    port's where they differ; ``ignore`` suppresses finding ids; ``trust`` runs the port where this
    host lacks a sandbox layer; ``sandbox``, a :class:`~cuda2nki.fidelity.sandbox.PortSandbox`
    launched early for this port (it is closed here); ``templates``, template arguments for a
    template kernel that no launch site instantiates; ``extra_points``: False runs the
    binding's own test points only (no generated sizes)."""
    from cuda2nki.fidelity import smallsizes
    from cuda2nki.fidelity.check import check as _check
    from cuda2nki.frontend.sizemacros import defines_win

    # a file sized by macros is checked at smaller values of them, as `migrate --check` does
    small, was = {}, {}
    if not static_only and os.path.isfile(port_path):
        try:
            port_text = read_text(port_path)
        except DiagnosticError:  # the check reports it
            port_text = None
        if port_text is not None:
            small, was = smallsizes.check_values(
                str(cuda_path), port_text, binding, defines, include_dirs
            )
    with defines_win(small):
        report = _check(
            cuda_path,
            port_path,
            binding=binding,
            kernel=kernel,
            port_kernel=port_kernel,
            seeds=seeds,
            overrides=overrides,
            binds=binds,
            static_only=static_only,
            target=hw,
            timeout=timeout,
            memory_mb=memory_mb,
            ignore=tuple(ignore),
            defines={**dict(defines or {}), **small},
            include_dirs=include_dirs,
            trust=trust,
            sandbox=sandbox,
            templates=templates,
            # the host's grid, computed from the same macros, covers the chosen sizes only
            extra_points=extra_points and not small,
        )
    if small:
        report = smallsizes.at_chosen_sizes(report, small)
        note = smallsizes.note(str(cuda_path), small, was)
        report = replace(report, findings=[*report.findings, note])
    return report


@dataclass(frozen=True)
class Review:
    """A reviewer's assessment: the check's report and, unless skipped, the figures of
    cuda2nki's own port of the same kernel (None when it has none that passes)."""

    report: CheckReport
    generated: dict[str, Any] | None

    @property
    def verdict(self) -> str:
        return self.report.verdict

    def to_markdown(self) -> str:
        from cuda2nki.report import review as fmt

        return fmt.to_markdown(self.report.to_dict(), self.generated)

    def to_html(self) -> str:
        from cuda2nki.report import review as fmt

        r = self.report
        return fmt.to_html(r.to_dict(), r.cuda_file, r.port_file, self.generated)


def review(
    cuda_path: str | Path,
    port_path: str | Path,
    *,
    compare: bool = True,
    binding: Binding | str | Path | None = None,
    kernel: str | None = None,
    port_kernel: str | None = None,
    seeds: int = 5,
    overrides: Mapping[str, Number] | None = None,
    binds: Mapping[str, str] | None = None,
    static_only: bool = False,
    hw: Hardware = "trn2",
    timeout: float = 120.0,
    memory_mb: int | None = 4096,
    ignore: Sequence[str] = (),
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    trust: bool = False,
    sandbox: Any = None,
    templates: Mapping[str, str] | None = None,
    extra_points: bool = True,
) -> Review:
    """:func:`check` a port, and with ``compare`` also port the kernel with cuda2nki and check
    that port the same way, for the review's comparison.  ``Review.to_markdown()`` and
    ``Review.to_html()`` render it as ``cuda2nki review`` does.  ``sandbox``: as for
    :func:`check` (the port under review's; cuda2nki's own port gets its own)."""
    from cuda2nki.fidelity.review import generated_baseline

    opts: dict[str, Any] = dict(
        binding=binding,
        kernel=kernel,
        port_kernel=port_kernel,
        seeds=seeds,
        overrides=overrides,
        binds=binds,
        static_only=static_only,
        hw=hw,
        timeout=timeout,
        memory_mb=memory_mb,
        ignore=tuple(ignore),
        defines=defines,
        include_dirs=include_dirs,
        trust=trust,
        templates=templates,
        extra_points=extra_points,
    )
    report = check(cuda_path, port_path, **opts, sandbox=sandbox)
    generated = None
    if compare and not static_only:
        generated = generated_baseline(cuda_path, report.to_dict(), opts)
    return Review(report, generated)
