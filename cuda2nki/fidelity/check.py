"""``cuda2nki check``: is a hand-written NKI port faithful to its CUDA kernel, and is it idiomatic?

1. Read the CUDA kernel and its binding; read the port statically (kernel, parameters, outputs).
2. Bind CUDA pointer parameters to port parameters and returned outputs.
3. For every test point (the binding's shapes, a ragged tail and a size-1 edge) and every seed
   (normal, uniform[-1, 1], heavy-tailed, special values, ...): run the CUDA kernel in the SIMT
   interpreter (the reference) and the port in a sandboxed simulator; compare each output with a
   tolerance derived from the kernel, classify and localise any difference.
4. Anti-fooling: NaN-poisoned port outputs, a determinism re-run, vacuity probes on the tolerance.
5. Findings from the port's text and from its instruction trace and cost profile.

The verdict is ``pass`` when every comparison is expected variation and no finding is above note.

The steps live in their own modules: binding CUDA to the port (:mod:`.check_bind`), the CUDA
reference runs (:mod:`.check_reference`), running both sides on every point (:mod:`.check_run`),
tolerance and verdict (:mod:`.check_judge`), root causes (:mod:`.check_causes`) and the findings
(:mod:`.check_findings`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuda2nki.binding import Binding, Number
from cuda2nki.diagnostics import Diagnostic, SourceLoc, make, related
from cuda2nki.fidelity import layoutscan, narrowed, portscan, smallsizes
from cuda2nki.fidelity.check_bind import PortBinding, bind_port
from cuda2nki.fidelity.check_findings import _as_given, _dedupe, _no_outputs, _returned_names
from cuda2nki.fidelity.check_judge import judge, numerics_outcome
from cuda2nki.fidelity.check_reference import CudaSource
from cuda2nki.fidelity.check_run import _dynamic
from cuda2nki.fidelity.sandbox import PortSandbox, time_limit
from cuda2nki.fileio import read_text
from cuda2nki.frontend.offsets import rebased


@dataclass
class CheckReport:
    cuda_file: str
    port_file: str
    kernel: str
    port_kernel: str
    api: str
    verdict: str  # pass | fail | unverified (static-only: nothing was run)
    numerics: list[dict[str, Any]]
    findings: list[Diagnostic]
    tolerance_source: str
    trace: dict[str, Any] = field(default_factory=dict)
    suppressed: int = 0
    seconds: float = 0.0
    static_only: bool = False
    binding_map: dict[str, str] = field(default_factory=dict)
    port_output: str = ""  # what the port printed in its sandbox (the end of it)

    @property
    def numerics_outcome(self) -> str:
        return numerics_outcome(self.numerics)

    @property
    def cost_us(self) -> float | None:
        prof = self.trace.get("profile") or {}
        if "overlapped_ns" in prof:
            return float(prof["overlapped_ns"]) / 1000.0
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "cuda_file": self.cuda_file,
            "port_file": self.port_file,
            "kernel": self.kernel,
            "port_kernel": self.port_kernel,
            "api": self.api,
            "static_only": self.static_only,
            "tolerance_source": self.tolerance_source,
            "binding": self.binding_map,
            "numerics": self.numerics,
            "findings": [
                {
                    "id": d.code,
                    "severity": str(d.severity),
                    "message": d.message,
                    "file": d.loc.file,
                    "line": d.loc.line,
                    "col": d.loc.col,
                    "notes": list(d.notes),
                    "related": related(d.notes),
                }
                for d in self.findings
            ],
            "suppressed": self.suppressed,
            "port_output": self.port_output,
            "trace": self.trace,
            "seconds": round(self.seconds, 3),
        }


# --------------------------------------------------------------------------- the check


#: a test point whose first run issues more engine instructions than this is run once: its other
#: seeds and the determinism re-run are left out, with a note (C2N4029).  A tiled port issues
#: tens to hundreds at the binding's points; a literal, thread-by-thread one issues one group per
#: CUDA block, thousands, and each of its runs takes seconds to simulate.  The instruction count,
#: not the time, decides, so a check leaves out the same runs on any machine.
HEAVY_RUN_INSTRUCTIONS = 5_000


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
    target: str = "trn2",
    timeout: float = 120.0,
    memory_mb: int | None = 4096,
    ignore: Sequence[str] = (),
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    extra_points: bool = True,
    trust: bool = False,
    sandbox: PortSandbox | None = None,
    templates: Mapping[str, str] | None = None,
    heavy_instructions: int | None = HEAVY_RUN_INSTRUCTIONS,
) -> CheckReport:
    """Check ``port_path`` against the CUDA kernel (see the module's docstring).  ``sandbox``: a
    :class:`PortSandbox` the caller launched early for this port (its start-up then overlaps the
    caller's own); it is closed here.  ``heavy_instructions``: a test point whose first run
    issues more engine instructions than this runs once (no other seed, no determinism re-run;
    noted as C2N4029); None runs every seed at every point whatever it costs."""
    from cuda2nki import frontend

    t0 = time.perf_counter()
    cuda_path, port_path = str(cuda_path), str(port_path)
    early = None  # the sandbox starts up while the kernel is parsed and lifted
    if sandbox is None and not static_only and os.path.isfile(port_path):
        early = sandbox = PortSandbox(
            port_path, None, target=target, timeout=timeout, memory_mb=memory_mb, trust=trust
        )
        early.launch()
    try:
        source = CudaSource(
            read_text(cuda_path, source=True),
            cuda_path,
            tuple(dict(defines or {}).items()),
            tuple(map(str, include_dirs)),
            tuple(dict(templates or {}).items()),
        )
        tu = frontend.parse_source(
            source.text,
            cuda_path,
            defines=dict(source.defines),
            include_dirs=source.include_dirs,
            templates=dict(source.templates),
        )
        b = _binding(cuda_path, binding, tu, kernel)
        name = _kernel_name(tu, kernel, b)
        tu = rebased(tu, name, b)  # `d_in + RADIUS` launches: run on the buffer itself
        info, tree = portscan.scan(port_path, read_text(port_path), port_kernel, name)
        pb = bind_port(b, info, binds)
        cuda_dtypes = {t.dtype for t in b.tensors if t.np_dtype.kind in "fV"}
        guarded = True
        found: list[Diagnostic] = portscan.static_findings(
            info, tree, cuda_dtypes=cuda_dtypes, cuda_guarded=guarded
        )
        layout = layoutscan.scan(tree, legacy=info.api == "legacy")
        if static_only:
            found.extend(layoutscan.findings(layout, info.path))
        numerics: list[dict[str, Any]] = []
        trace: dict[str, Any] = {}
        tol_source = "none"
        port_output = ""
        if static_only and sandbox is not None:
            sandbox.close()
        if not static_only:
            box = sandbox or PortSandbox(
                info.path,
                info.kernel,
                target=target,
                timeout=timeout,
                memory_mb=memory_mb,
                trust=trust,
            )
            # the check's own settings are authoritative for a sandbox launched by the caller
            box.kernel, box.target, box.timeout, box.memory_mb = (
                info.kernel,
                target,
                timeout,
                memory_mb,
            )
            box.heavy_instructions = heavy_instructions
            if sandbox is None:
                box.launch()  # the sandbox starts up while the kernel is lifted and the inputs made
            try:
                intent, idiom = _intent(*_lifted_pair(tu, name, b))
                numerics, run_found, trace, tol_source, port_output = _dynamic(
                    tu,
                    name,
                    b,
                    info,
                    pb,
                    intent,
                    idiom,
                    seeds,
                    overrides,
                    timeout,
                    extra_points,
                    box,
                    layout,
                    source,
                )
            finally:
                box.close()
            found.extend(run_found)
            if not numerics and not any(d.code == "C2N4023" for d in found):
                found.append(_no_outputs(b, info, name))
    except BaseException:
        if early is not None:
            early.close()  # a check that stops before the port runs leaves no sandbox
        raise
    kept = [d for d in found if not info.suppressed(d) and d.code not in ignore]
    suppressed = len(found) - len(kept)
    kept = _dedupe([_as_given(d, info.path) for d in kept])
    if suppressed:  # each inline suppression named with its reason
        whys = list(dict.fromkeys(w for d in found if (w := info.why(_as_given(d, info.path)))))
        at = SourceLoc(info.path, info.line, 1)
        kept.append(make("C2N5013", at, notes=whys, count=suppressed))
    kept = smallsizes.at_inferred_sizes(kept, b, trace.get("shape", ""))
    verdict = judge(numerics, kept, static_only)
    return CheckReport(
        cuda_path,
        port_path,
        name,
        info.kernel,
        info.api,
        verdict,
        numerics,
        kept,
        tol_source,
        trace,
        suppressed,
        time.perf_counter() - t0,
        static_only,
        {
            **{v: k for k, v in pb.inputs.items()},
            **{v: k for k, v in pb.scalars.items()},
            **_returned_names(pb, info),
        },
        port_output,
    )


def _binding(
    cuda_path: str, binding: Binding | str | Path | None, tu: Any, kernel: str | None
) -> Binding:
    """The same resolution as ``cuda2nki port``: explicit, sidecar, else inferred (C2N2502)."""
    from cuda2nki.pipeline import resolve_binding

    if kernel is None and len(tu.kernels) == 1:
        kernel = tu.kernels[0].name
    return resolve_binding(cuda_path, binding, tu, kernel)


def _kernel_name(tu: Any, kernel: str | None, b: Binding) -> str:
    from cuda2nki.frontend.select import select_kernel

    return select_kernel(tu, kernel, b)


#: seconds the lifter may take inside a check before the check goes on without the IR
LIFT_TIME_LIMIT = 20.0


def _lifted_pair(tu: Any, name: str, b: Binding) -> tuple[Any, str, Binding]:
    """:func:`_intent`'s arguments: a float64 kernel is lifted as its fp32 twin."""
    tu, b = narrowed.lift_inputs(tu, b)
    return tu, name, b


def _intent(tu: Any, name: str, b: Binding) -> tuple[Any, str | None]:
    """The kernel's intent IR (for the derived tolerance) and its idiom, lifted as the port is
    (moved pointers fixed first); (None, binding idiom) when the kernel is not lifted, the lifter
    fails, or it runs past ``LIFT_TIME_LIMIT``."""
    try:
        from cuda2nki import lift
    except ImportError:
        return None, b.meta.get("idiom")
    from cuda2nki.frontend.pointers import fix_unit

    if name not in tu.rejected:  # moved pointers become fixed ones, as the port lifts them
        tu = fix_unit(tu, name)
    try:
        with time_limit(LIFT_TIME_LIMIT):
            res = lift.lift_kernel(tu, name, b)
    except Exception:  # noqa: BLE001 - no IR means the fp64-run tolerance, not a failed check
        return None, b.meta.get("idiom")
    if getattr(res, "claimed", False):
        return getattr(res, "kernel_ir", None), getattr(res, "idiom", None) or b.meta.get("idiom")
    return None, b.meta.get("idiom")


__all__ = ["CheckReport", "PortBinding", "bind_port", "check"]
