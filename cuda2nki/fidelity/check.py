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
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cuda2nki import fp64
from cuda2nki.binding import Binding, Number, Resolved
from cuda2nki.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Note,
    Severity,
    SourceLoc,
    make,
    related,
)
from cuda2nki.fidelity import (
    blockorder,
    layoutscan,
    loopnest,
    narrowed,
    pathscan,
    points,
    portscan,
    provenance,
    refcache,
    rootcause,
    smallsizes,
    storagedtype,
    tracefind,
)
from cuda2nki.fidelity import traffic as traffic_mod
from cuda2nki.fidelity.compare import Comparison, compare, vacuous, wrong_axis
from cuda2nki.fidelity.inputs import DISTRIBUTIONS
from cuda2nki.fidelity.intensity import contraction_reuse
from cuda2nki.fidelity.oracle import promoted, run_fp64
from cuda2nki.fidelity.parallelism import work_rows
from cuda2nki.fidelity.sandbox import PortSandbox, time_limit
from cuda2nki.fidelity.tolerance import (
    Tolerance,
    default_tolerance,
    derived_tolerance,
    empirical_tolerance,
)
from cuda2nki.fileio import read_text
from cuda2nki.frontend.demote import demoted
from cuda2nki.frontend.offsets import rebased
from cuda2nki.nkisim.dtypes import CANARY_F32, canary_mask

_DEFECT_IDS = {
    "unwritten": "C2N4003",
    "tail": "C2N4004",
    "transposed": "C2N4005",
    "shifted": "C2N4006",
    "scaled": "C2N4007",
    "tiles": "C2N4008",
    "nonfinite": "C2N4009",
    "shape": "C2N4010",
}
_SANDBOX_IDS = {"timeout": "C2N4015", "memory": "C2N4016", "crash": "C2N4018"}


#: sandbox stops that leave a port's numbers unknown: it ran out of time or memory before it
#: produced outputs, which says nothing about whether they would have matched
_UNFINISHED = frozenset({"timeout", "memory"})


def judge(numerics: Any, findings: list, static_only: bool) -> str:
    """The verdict of a check: ``fail`` on failed or unfinished numerics (a port stopped before
    its outputs existed never passes, even with its finding ignored) or any finding above a note;
    ``unverified`` where nothing ran (the port's numbers are unknown, never a pass)."""
    failed = numerics_outcome(numerics) in ("fail", "unfinished")
    worst = max((d.severity for d in findings), default=Severity.NOTE)
    verdict = "fail" if failed or worst > Severity.NOTE else "pass"
    return "unverified" if static_only and verdict == "pass" else verdict


def numerics_outcome(numerics: list[dict[str, Any]]) -> str:
    """``pass`` when every comparison is expected variation, ``fail`` when one is not (outputs
    that differ, or a port that crashed), ``unfinished`` when the only shortfall is a port
    stopped for time or memory before it produced outputs (its numbers are unknown, not
    wrong), ``none`` when nothing was compared (a static-only check)."""
    if not numerics:
        return "none"
    bad = [n for n in numerics if n["classification"] != "expected"]
    if not bad:
        return "pass"
    if all(n.get("output") == "*" and n.get("defect") in _UNFINISHED for n in bad):
        return "unfinished"
    return "fail"


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


# --------------------------------------------------------------------------- binding CUDA <-> port


@dataclass(frozen=True)
class PortBinding:
    inputs: dict[str, str]  # port parameter -> CUDA tensor name
    scalars: dict[str, str]  # port parameter -> CUDA scalar name
    outputs: list[str]  # CUDA out/inout tensor names in the order the port returns them


def _pyname(name: str) -> str:
    import keyword

    return name + "_" if keyword.iskeyword(name) else name


def bind_port(
    binding: Binding, info: portscan.PortInfo, overrides: Mapping[str, str] | None = None
) -> PortBinding:
    """Match CUDA parameters to the port: by name (keyword + '_'), then by position; ``overrides``
    maps CUDA names to port names."""
    overrides = dict(overrides or {})
    ins = [t for t in binding.tensors if t.role in ("in", "inout")]
    outs = [t for t in binding.tensors if t.role in ("out", "inout")]
    scalars = {s.name for s in binding.scalars}
    port_params = list(info.params) + list(info.keyword_params)
    bad = [c for c in overrides if c not in {t.name for t in binding.tensors} | scalars]
    if bad:
        raise _bind_error(info, f"--bind names unknown CUDA parameter(s): {', '.join(bad)}")
    inputs: dict[str, str] = {}
    scal: dict[str, str] = {}
    free_params = [p for p in info.params]
    for t in ins:
        want = overrides.get(t.name, _pyname(t.name))
        cand = want if want in port_params else (t.name if t.name in port_params else None)
        if cand is not None:
            inputs[cand] = t.name
            if cand in free_params:
                free_params.remove(cand)
    for p in list(free_params):
        if p in scalars or p in {overrides.get(s, s) for s in scalars}:
            scal[p] = next(s for s in scalars if overrides.get(s, s) == p)
            free_params.remove(p)
    unmatched = [t for t in ins if t.name not in inputs.values()]
    for t, p in zip(unmatched, list(free_params)):  # by position
        inputs[p] = t.name
        free_params.remove(p)
    missing = [t.name for t in ins if t.name not in inputs.values()]
    if missing:
        raise _bind_error(
            info,
            f"CUDA input(s) {', '.join(missing)} have no port parameter; the port takes "
            f"({', '.join(info.params)}); use --bind cuda_name=port_name",
        )
    if free_params:
        raise _bind_error(
            info,
            f"port parameter(s) {', '.join(free_params)} match no CUDA parameter; "
            f"CUDA has {', '.join(binding.param_names)}",
        )
    for p in info.keyword_params:
        cuda = next((s for s in scalars if overrides.get(s, _pyname(s)) == p), None)
        if cuda is not None:
            scal[p] = cuda
    order = _output_order(outs, info, overrides)
    return PortBinding(inputs, scal, order)


def _output_order(
    outs: Sequence[Any], info: portscan.PortInfo, overrides: Mapping[str, str]
) -> list[str]:
    names = [t.name for t in outs]
    ret = list(info.returns)
    if ret and len(ret) == len(names):
        by_port = {overrides.get(n, _pyname(n)): n for n in names}
        if all(r in by_port for r in ret):
            return [by_port[r] for r in ret]  # type: ignore[index]
    return names


def _bind_error(info: portscan.PortInfo, reason: str) -> DiagnosticError:
    return DiagnosticError(make("C2N4019", SourceLoc(info.path, info.line, 1), reason=reason))


@dataclass(frozen=True)
class CudaSource:
    """The CUDA file as read, and how it was parsed: re-parsed with a literal changed to test
    the literal-based root causes (``constants.py``)."""

    text: str
    path: str
    defines: tuple[tuple[str, str], ...] = ()
    include_dirs: tuple[str, ...] = ()
    templates: tuple[tuple[str, str], ...] = ()

    def parse(self, text: str) -> Any:
        from cuda2nki import frontend

        return frontend.parse_source(
            text,
            self.path,
            defines=dict(self.defines),
            include_dirs=self.include_dirs,
            templates=dict(self.templates),
        )


# --------------------------------------------------------------------------- running the port


class PortVariant:
    """The port with its text changed (one literal), run once in a sandbox of its own on one
    input set, for the root-cause tests; runs are remembered by (text, inputs)."""

    #: sandboxed re-runs one check may spend on variants (each starts a simulator)
    MAX_RUNS = 2

    def __init__(self, info: portscan.PortInfo, pb: PortBinding, like: PortSandbox) -> None:
        self.info, self.pb, self.like = info, pb, like
        self.memo: dict[tuple[Any, ...], dict[str, np.ndarray]] = {}
        #: the literal explanations found so far (a mechanism holds for the whole check)
        self.found: dict[str, rootcause.Mechanism] = {}

    def __call__(
        self,
        text: str,
        r: Resolved,
        arrays: Mapping[str, np.ndarray],
        scalars: Mapping[str, Number] | None = None,
    ) -> dict[str, np.ndarray]:
        """The port's outputs with its text ``text`` and its scalar arguments ``scalars``
        changed (port parameter -> value); ``{}`` when the run fails or the budget is spent."""
        key = (text, id(arrays), tuple(sorted((scalars or {}).items())))
        if key not in self.memo:
            if len(self.memo) >= self.MAX_RUNS:
                return {}
            self.memo[key] = self._run(text, r, arrays, scalars or {})
        return self.memo[key]

    def _run(
        self,
        text: str,
        r: Resolved,
        arrays: Mapping[str, np.ndarray],
        scalars: Mapping[str, Number],
    ) -> dict[str, np.ndarray]:
        import tempfile

        kwargs = {**points.port_kwargs(self.pb, r, dict(arrays)), **scalars}
        with tempfile.TemporaryDirectory(prefix="c2n-variant-") as d:
            path = Path(d) / Path(self.info.path).name
            path.write_text(text, encoding="utf-8")
            box = PortSandbox(
                str(path),
                self.info.kernel,
                [[kwargs]],
                target=self.like.target,
                timeout=self.like.timeout,
                memory_mb=self.like.memory_mb,
                profile_first=False,
                trust=self.like.trust,
            )
            with box:
                res = box.result(0)
        if res.status != "ok" or not res.value or res.value[0].get("status") != "ok":
            return {}
        outs = _match_outputs(res.value[0]["outputs"], self.pb, self.info)
        return {k: v for k, v in outs.items() if v is not None}


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
            read_text(cuda_path),
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


def _no_outputs(b: Binding, info: portscan.PortInfo, name: str) -> Diagnostic:
    """C2N4023 for a check whose runs gave nothing to compare: the kernel writes no tensor
    (it only prints, say), so the port's faithfulness is not shown by any number."""
    written = [t.name for t in b.tensors if t.role in ("out", "inout")]
    reason = (
        "the kernel writes no tensor the check can compare (what it prints is not compared)"
        if not written
        else f"no output of the port could be matched to {', '.join(written)}"
    )
    return make("C2N4023", SourceLoc(b.path or info.path, 1, 1), kernel=name, reason=reason)


def _returned_names(pb: PortBinding, info: portscan.PortInfo) -> dict[str, str]:
    """CUDA output -> the name the port returns it under (where it returns plain names)."""
    if len(info.returns) != len(pb.outputs):
        return {}
    return {c: r for c, r in zip(pb.outputs, info.returns) if r is not None}


def _as_given(d: Diagnostic, port_path: str) -> Diagnostic:
    """A diagnostic on the port names it as the command line did (the simulator reports the
    absolute path of the module it loaded)."""
    if d.loc.file == port_path:
        return d
    try:
        same = Path(d.loc.file).resolve() == Path(port_path).resolve()
    except (OSError, ValueError):
        same = False
    return dataclasses.replace(d, loc=dataclasses.replace(d.loc, file=port_path)) if same else d


def _dedupe(ds: list[Diagnostic]) -> list[Diagnostic]:
    """One diagnostic per (id, place); repeats on other shapes become a note on the first."""
    groups: dict[tuple[str, str, int], list[Diagnostic]] = {}
    for d in ds:
        groups.setdefault((d.code, d.loc.file, d.loc.line), []).append(d)
    out = []
    for group in groups.values():
        first = group[0]
        others = [d.message for d in group[1:] if d.message != first.message]
        if others:
            note = f"{len(others)} more like it, e.g. {others[0]}"
            first = Diagnostic(
                first.code, first.severity, first.message, first.loc, (*first.notes, note)
            )
        out.append(first)
    return sorted(out, key=lambda d: (-int(d.severity), d.code, d.loc.line))


def _binding(
    cuda_path: str, binding: Binding | str | Path | None, tu: Any, kernel: str | None
) -> Binding:
    """The same resolution as ``cuda2nki port``: explicit, sidecar, else inferred (C2N2502)."""
    from cuda2nki.codegen.pipeline import resolve_binding

    if kernel is None and len(tu.kernels) == 1:
        kernel = tu.kernels[0].name
    return resolve_binding(cuda_path, binding, tu, kernel)


def _kernel_name(tu: Any, kernel: str | None, b: Binding) -> str:
    from cuda2nki.frontend.select import select_kernel

    return select_kernel(tu, kernel, b)


#: how much of what the port printed (its last bytes) a report keeps
PORT_OUTPUT_BYTES = 4000

#: seconds the lifter may take inside a check before the check goes on without the IR
LIFT_TIME_LIMIT = 20.0
#: a generated test point at which one run of the port would issue more engine instructions than
#: this (at its pace so far) is skipped with a note (C2N4027)
PORT_INSTRUCTIONS = 20_000


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


def _reference(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray], traffic: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], traffic_mod.Traffic | None]:
    """:func:`_reference_run`, remembered per kernel, point and inputs (:mod:`.refcache`)."""
    key = refcache.run_key(f"reference traffic={traffic}", tu, name, r, arrays)
    return refcache.remembered(key, lambda: _reference_run(tu, name, r, arrays, traffic))


def _fp64(
    tu64: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray]
) -> dict[str, np.ndarray] | None:
    """:func:`run_fp64`, remembered per kernel, point and inputs (:mod:`.refcache`)."""
    key = refcache.run_key("fp64", tu64, name, r, arrays)
    return refcache.remembered(key, lambda: run_fp64(tu64, name, r, arrays))


def _reference_run(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray], traffic: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], traffic_mod.Traffic | None]:
    """The CUDA kernel's outputs, per output the elements the kernel never writes, and (with
    ``traffic``) the bytes the computation needs: the distinct input bytes the kernel reads
    and the output bytes it writes, counted in the same run.

    ``out`` buffers start filled with the canary NaN, so elements no CUDA thread writes are told
    apart; they are "don't care" for the comparison (a port may leave them or fill them).
    """
    from cuda2nki.simt.runner import run_kernel_full

    args: dict[str, Any] = {**r.scalars, **{k: v.copy() for k, v in arrays.items()}}
    for t in r.binding.tensors:
        if t.role == "out" and args[t.name].dtype == np.float32:
            args[t.name].fill(CANARY_F32)
    res = run_kernel_full(
        tu,
        name,
        grid=r.grid,
        block=r.block,
        shared_bytes=r.shared_bytes,
        args=args,
        track_reads=traffic,
    )
    out = res.outputs
    refs, dont_care = {}, {}
    for t in r.binding.tensors:
        if t.role == "in":
            continue
        a = np.asarray(out[t.name]).reshape(r.shapes[t.name])
        mask = canary_mask(a)
        if mask.any():
            a = a.copy()
            a[mask] = 0.0
        refs[t.name], dont_care[t.name] = a, mask
    needed = traffic_mod.from_run(r.binding, res.read_bytes, refs, dont_care) if traffic else None
    return refs, dont_care, needed


def _ndebug(
    tu: Any, exc: DiagnosticError, info: portscan.PortInfo
) -> tuple[Any, Diagnostic] | None:
    """For a CUDA run stopped by a failed ``assert`` (C2N1513): the unit compiled with NDEBUG
    (:mod:`cuda2nki.frontend.noassert`) and the note saying where the assertion failed; None
    for any other fault, or a unit without assertions (a ``__trap()``)."""
    from cuda2nki.frontend.noassert import has_asserts, without_asserts

    fault = next((d for d in exc.diagnostics if d.code == "C2N1513"), None)
    if fault is None or not has_asserts(tu):
        return None
    where = fault.message.split(" in kernel ", 1)[-1]
    note = make("C2N4031", fault.loc, where=where, port=Path(info.path).name)
    return without_asserts(tu), note


def _swapped_axes(
    tu: Any,
    name: str,
    r: Resolved,
    arrays: dict[str, np.ndarray],
    cname: str,
    got: np.ndarray,
    expected: np.ndarray,
) -> str:
    """:func:`axisswap.transposed_layout`'s evidence, the CUDA kernel re-run at the binding
    point with one input's sizes exchanged (other inputs and the output keep their roles)."""
    from cuda2nki.fidelity import axisswap

    roles = {t.name: t for t in r.binding.tensors}

    def rerun(overrides: Mapping[str, Any], inputs: Mapping[str, np.ndarray]) -> Any:
        try:
            r2 = r.binding.resolve({**r.scalars, **overrides})
        except DiagnosticError:
            return None
        args: dict[str, np.ndarray] = {}
        for k, v in {**arrays, **inputs}.items():
            t = roles.get(k)
            if t is not None and t.role == "out" and r2.shapes[k] != v.shape:
                v = np.zeros(r2.shapes[k], v.dtype)  # a fresh output of the swapped shape
            if t is not None and r2.shapes[k] != v.shape:
                return None  # another input would change shape: not this hypothesis
            args[k] = v
        try:
            return _reference(tu, name, r2, args)[0][cname]
        except DiagnosticError:
            return None

    shapes = {t.name: t.shape for t in r.binding.tensors if t.role in ("in", "inout")}
    ins = {k: v for k, v in arrays.items() if k in shapes}
    return axisswap.transposed_layout(got, expected, ins, shapes, r.scalars, rerun)


def _dynamic(
    tu: Any,
    name: str,
    b: Binding,
    info: portscan.PortInfo,
    pb: PortBinding,
    intent: Any,
    idiom: str | None,
    seeds: int,
    overrides: Mapping[str, Number] | None,
    timeout: float,
    extra_points: bool,
    box: PortSandbox,
    layout: Sequence[layoutscan.Candidate] = (),
    source: CudaSource | None = None,
) -> tuple[list[dict[str, Any]], list[Diagnostic], dict[str, Any], str, str]:
    """Run the port (in ``box``, launched by the caller) and the CUDA kernel on every test
    point and compare; returns (numerics, findings, trace summary, tolerance sources, what the
    port printed)."""
    numerics: list[dict[str, Any]] = []
    found: list[Diagnostic] = []
    trace: dict[str, Any] = {}
    sources: set[str] = set()
    rng = np.random.default_rng(12345)
    traced: list[tuple[tracefind.ProblemSize, tracefind.TraceSummary, str, int]] = []
    needs: dict[int, traffic_mod.Traffic] = {}  # per test point: what the computation needs
    writer_cache: dict[str, Any] = {}
    causes: dict[tuple[str, str], rootcause.Cause | None] = {}
    port_text = read_text(info.path)
    loops = rootcause.loop_targets(port_text)
    wide = set(fp64.wide_tensors(b))  # computed in fp32 by any NKI port
    narrows = narrowing(port_text) or bool(wide)
    tu64 = tu32 = None
    first = True
    tree = ast.parse(port_text)
    kernel_fn = portscan.find_kernel(tree, info.path, info.kernel)
    bounds = points.port_bounds(b, pb, pathscan.thresholds(kernel_fn, tree))
    plan = points.plan_points(b, overrides, extra_points, seeds, pb, found, bounds)
    if b.multiples and any(q[0].generated for q in plan):
        found.append(points.steps_note(b, info))
    plan = points.cheapest_generated_last(plan)
    pace = points.Pace(PORT_INSTRUCTIONS)
    largest: tuple[int, Resolved, dict[str, np.ndarray]] | None = None  # a point run, by bytes
    executed: set[int] = set()
    variant = PortVariant(info, pb, box)
    nest = None  # a kernel that did not lift: is its loop nest a matmul all the same?
    if intent is None and idiom not in tracefind.CONTRACTION_IDIOMS:
        nest = loopnest.contraction(tu, name, {t.name: len(t.shape) for t in b.tensors})
    every_point_ran = bool(plan)
    jobs = [runs for _, _, _, runs in plan]
    measured = max(range(len(plan)), key=lambda i: _total_bytes(plan[i][1]), default=-1)
    box.submit(jobs)
    compared = 0
    short_of: set[str] = set()  # float64 outputs found to keep too few digits in fp32
    heavy: list[tuple[str, int, int]] = []  # points run once: (label, instructions, runs left out)
    with box:  # the port runs while the references are computed below
        for k, (point, r, all_sets, runs) in enumerate(plan):
            if point.generated and pace.over(r):
                found.append(pace.note(info, [_label(q[1]) for q in plan[k:]]))
                every_point_ran = False
                if measured >= k and largest is not None:  # count the needed bytes where it ran
                    with contextlib.suppress(DiagnosticError):
                        needs[largest[0]] = _reference(tu, name, *largest[1:], traffic=True)[2]
                break  # the later generated points are larger still
            sets, refs, oracles, skips = [], [], [], []
            for arrays in all_sets:
                try:
                    # at the point whose trace the findings read (the largest), the first
                    # seed's run also counts the bytes the computation needs
                    ref, skip, need = _reference(
                        tu, name, r, arrays, traffic=k == measured and not sets
                    )
                except DiagnosticError as exc:
                    stripped = _ndebug(tu, exc, info)
                    if stripped is not None:
                        # an assertion failed on generated inputs: the port has none, so
                        # compare it with the kernel compiled with NDEBUG, and say so
                        tu, note = stripped
                        tu32 = tu64 = None
                        found.append(note)
                        ref, skip, need = _reference(
                            tu, name, r, arrays, traffic=k == measured and not sets
                        )
                    elif point.generated:
                        break  # a generated edge point the CUDA kernel itself cannot run: skip it
                    else:
                        raise exc
                if need is not None:
                    needs[k] = need
                sets.append(arrays)
                refs.append(ref)
                skips.append(skip)
                if intent is None and wide:  # no IR bound: measure fp32 on the fp32 twin
                    if tu32 is None:
                        tu32 = demoted(tu)
                    oracles.append(narrowed.fp32_run(tu32, name, r, arrays))
                elif intent is None:  # no IR bound: measure the kernel's own fp32 error instead
                    if tu64 is None:
                        tu64 = promoted(tu)
                    oracles.append(_fp64(tu64, name, r, arrays))
                else:
                    oracles.append(None)
            if not sets:
                continue
            if largest is None or _total_bytes(r) > _total_bytes(largest[1]):
                largest = (k, r, sets[0])
            res = box.result(k)
            if res.status == "ok" and res.value and isinstance(res.value[0], dict):
                pace.ran(r, int(res.value[0].get("instructions", 0)))
            label = _label(r)
            for v in res.violations:
                found.append(
                    make("C2N4017", SourceLoc(info.path, res.line or info.line, 1), what=v)
                )
            if res.status == "unavailable":
                found.append(make("C2N4024", SourceLoc(info.path, info.line, 1), reason=res.error))
                break
            if res.status != "ok":
                every_point_ran = False
                code = _SANDBOX_IDS.get(res.status, "C2N4014")
                if code == "C2N4014" and "MemoryError" in str(res.error):
                    code = "C2N4016"  # ran out of memory loading the port (module-level allocation)
                if res.status == "blocked":
                    code = ""
                fmt = {"point": label, "reason": res.error, "seconds": timeout}
                found.extend(res.extra.get("diagnostics", ()))
                if code:
                    found.append(make(code, SourceLoc(info.path, res.line or info.line, 1), **fmt))
                numerics.append(
                    {
                        "shape": label,
                        "output": "*",
                        "classification": "defect",
                        "defect": "memory" if code == "C2N4016" else res.status,
                        "evidence": res.error,
                    }
                )
                first = False
                if res.status in ("blocked", "timeout", "crash"):
                    break  # the sandbox is gone: later points have nothing to report
                continue
            # the runs of the seeds compared, then the determinism re-run of the first (a
            # generated point has none; a heavy point ran only its first run)
            cut = len(res.value) < len(runs)
            if cut:
                heavy.append((label, int(res.value[0].get("instructions", 0)), len(runs) - 1))
            rerun = [] if point.generated or cut else res.value[-1:]
            results = [*res.value[: len(sets)], *rerun]
            compared += 1
            if "lines" in results[0]:
                executed.update(int(ln) for ln in results[0]["lines"])
            else:
                every_point_ran = False
            found.extend(provenance.findings(results, pb, info))
            bound_memo: dict[int, dict[str, Any]] = {}  # per seed: the IR bounds of every output
            for si, (entry, ref, arrays, oracle, skip) in enumerate(
                zip(results, refs, sets, oracles, skips)
            ):
                if entry["status"] != "ok":
                    failure = _run_failure(entry, info, label, _given(runs[si]))
                    if res.violations:  # the sandbox's refusal is reported once, as C2N4017
                        failure = [d for d in failure if "cuda2nki sandbox:" not in d.message]
                    found.extend(failure)
                    found.extend(_capacity_findings(failure))
                    memory = _memory_findings(failure, entry, info, label)
                    found.extend(memory)
                    numerics.append(
                        {
                            "shape": label,
                            "seed": si,
                            "output": "*",
                            "classification": "defect",
                            "defect": "memory" if memory else "error",
                            "evidence": entry.get("error")
                            or "; ".join(d.message for d in entry.get("diagnostics", ()))
                            or "constraint violation",
                        }
                    )
                    break
                if "trace" in entry:
                    size = _problem_size(r, idiom, intent)
                    if nest is not None:
                        size = dataclasses.replace(
                            size,
                            idiom="matmul",
                            reuse=_problem_size(r, "matmul", intent).reuse,
                            contraction=f"the CUDA kernel's loop at line {nest.line} is a "
                            f"contraction ({nest.factors[0]} x {nest.factors[1]} over "
                            f"'{nest.counter}'), matmul-shaped work",
                        )
                    traced.append((size, entry["trace"], label, k))
                outs = _match_outputs(entry["outputs"], pb, info)
                for cname in pb.outputs:
                    t = b.tensor(cname)
                    tol = _tolerance(
                        intent,
                        arrays,
                        r,
                        cname,
                        narrowed.tolerance_dtype(t.dtype, cname, wide),
                        ref[cname],
                        idiom,
                        found,
                        first,
                        None if oracle is None else oracle.get(cname),
                        bound_memo.setdefault(si, {}),
                    )
                    sources.add(tol.source)
                    got = outs.get(cname)
                    if got is None:
                        found.append(
                            make(
                                "C2N4010",
                                SourceLoc(info.path, info.line, 1),
                                output=cname,
                                evidence="the port does not return this output",
                            )
                        )
                        continue
                    mismatch = _output_layout(got, cname, r, info, wide)
                    found.extend(mismatch)
                    if any(d.code == "C2N4021" for d in mismatch) and not _same_kind(got, r, cname):
                        e = np.asarray(ref[cname])
                        c = Comparison(
                            cname,
                            tuple(e.shape),
                            float("inf"),
                            float("inf"),
                            float("inf"),
                            100.0,
                            int(e.size),
                            float(np.max(tol.bound)),
                            "defect",
                            "dtype",
                            mismatch[0].message + "; values not compared",
                        )
                        dist = DISTRIBUTIONS[si % len(DISTRIBUTIONS)]
                        numerics.append(_numeric_entry(c, label, si, dist, tol))
                        continue
                    c = compare(
                        cname,
                        got,
                        ref[cname],
                        tol.bound,
                        alt_tols=tol.alternatives,
                        unwritten=canary_mask(got),
                        dont_care=skip.get(cname),
                    )
                    if not c.ok:  # CUDA's own result may hang on the order of its blocks
                        run = blockorder.Run(
                            tu, name, r, arrays, SourceLoc(info.path, info.line, 1)
                        )
                        c = blockorder.judged(c, got, ref[cname], tol, skip.get(cname), run, found)
                    if not c.ok:
                        if oracle is None and intent is not None:
                            if tu64 is None:
                                tu64 = promoted(tu)
                            oracle = _fp64(tu64, name, r, arrays) or {}
                            oracles[si] = oracle
                        c = _own_rounding(c, got, ref[cname], (oracle or {}).get(cname), tol)
                    if c.classification == "precision" and not narrows:
                        c = dataclasses.replace(
                            c,
                            classification="defect",
                            evidence=c.evidence.replace(
                                "within the bound for", "would fit the bound for"
                            )
                            + "; but the port narrows no dtype (no bf16/fp8/fp16 tile or matmul), "
                            "so this is not precision loss",
                        )
                    if c.classification in ("defect", "precision"):
                        axis = wrong_axis(got, ref[cname], arrays) or _swapped_axes(
                            tu, name, r, arrays, cname, got, ref[cname]
                        )
                        if axis:
                            c = dataclasses.replace(
                                c, classification="defect", defect="wrong_axis", evidence=axis
                            )
                    if c.ok and cname in wide and cname not in short_of:
                        lost = narrowed.shortfall(
                            cname,
                            got,
                            ref[cname],
                            skip.get(cname),
                            True,
                            SourceLoc(info.path, info.line, 1),
                        )
                        if lost is not None:
                            short_of.add(cname)
                            found.append(lost)
                    entry_n = _numeric_entry(
                        c, label, si, DISTRIBUTIONS[si % len(DISTRIBUTIONS)], tol
                    )
                    numerics.append(entry_n)
                    if not c.ok:
                        where = _cuda_writers(
                            tu,
                            name,
                            r,
                            arrays,
                            pb.outputs,
                            cname,
                            got,
                            ref[cname],
                            tol,
                            writer_cache,
                            label,
                        )
                        if where:
                            entry_n["cuda_writers"] = where
                        key = (label, cname)
                        if key not in causes:
                            causes[key] = _root_cause(
                                tu,
                                name,
                                r,
                                results[0],
                                pb,
                                cname,
                                got,
                                ref[cname],
                                tol,
                                arrays,
                                c,
                                loops,
                                source,
                                port_text,
                                variant,
                            )
                        cause = causes[key]
                        if cause is not None:
                            entry_n.update(cause.to_dict())
                        stores = _stores(tu, name, cname, writer_cache)
                        found.append(_finding(c, info, label, where, cause, stores))
                    if si == 0 and first:
                        probes = vacuous(ref[cname], tol.bound, rng)
                        if probes:
                            found.append(
                                make(
                                    "C2N4012",
                                    SourceLoc(info.path, info.line, 1),
                                    output=cname,
                                    probes=", ".join(probes),
                                )
                            )
            if (
                len(results) == len(sets) + 1
                and results[0]["status"] == results[-1]["status"] == "ok"
            ):
                found.extend(_determinism(results[0], results[-1], pb, info))
            first = False
        port_output = box.output_tail(PORT_OUTPUT_BYTES)
        for line, what in box.attempts():
            found.append(make("C2N4017", SourceLoc(info.path, line or info.line, 1), what=what))
    if not compared and not any(d.code == "C2N4024" for d in found):
        if not numerics:
            found.append(
                make(
                    "C2N4023",
                    SourceLoc(b.path or info.path, 1, 1),
                    kernel=name,
                    reason=points.no_points_reason(b, overrides, extra_points),
                )
            )
    if heavy:
        found.append(_heavy_note(info, heavy, box.heavy_instructions))
    if compared and every_point_ran:
        found.extend(_unexecuted(kernel_fn, tree, executed, info, compared))
    if traced:
        # trace findings from the largest problem run: small problems excuse small DMAs (NKI.md §14.7)
        size, summary, label, k = max(traced, key=lambda t: t[0].total_bytes)
        trace = {**summary.to_dict(), "shape": label}
        found.extend(tracefind.findings(summary, size, info.path))
        need = needs.get(k)
        if need is not None:
            r = plan[k][1]
            need = dataclasses.replace(need, **_kernel_flops(intent, nest, r))
            trace.update(traffic_mod.roofline_fields(need))
            found.extend(traffic_mod.findings(summary, need, size, info.path))
        per_line = tracefind.port_lines(summary, info.path)
        found.extend(layoutscan.findings(layout, info.path, per_line, size.rows))
    return numerics, found, trace, "/".join(sorted(sources)) or "none", port_output


def _heavy_note(
    info: portscan.PortInfo, heavy: Sequence[tuple[str, int, int]], limit: int | None
) -> Diagnostic:
    """The note for the points whose first run was heavy: (label, instructions of that run, runs
    left out) each."""
    return make(
        "C2N4029",
        SourceLoc(info.path, info.line, 1),
        points=", ".join(f"{lab} ({n:,} instructions)" for lab, n, _ in heavy),
        left=max(left for _, _, left in heavy),
        limit=f"{limit or 0:,}",
    )


def _kernel_flops(intent: Any, nest: Any, r: Resolved) -> dict[str, Any]:
    """The CUDA kernel's contraction flops at ``r``: from the intent where the kernel lifts,
    else from a matmul-shaped CUDA loop nest (``nest``); none when neither shows a contraction."""
    flops = traffic_mod.intent_flops(intent, r.scalars, r.shapes) if intent is not None else 0
    if flops:
        return {"flops": flops, "flops_from": "intent"}
    if nest is not None:
        flops = traffic_mod.nest_flops(nest.factors, r)
        if flops:
            return {"flops": flops, "flops_from": "loop nest"}
    return {}


def _unexecuted(
    fn: ast.FunctionDef, tree: ast.Module, executed: set[int], info: portscan.PortInfo, n: int
) -> list[Diagnostic]:
    """C2N4026 at the first port block that issues instructions and ran at no test point."""
    spans = pathscan.unexecuted(fn, tree, executed)
    if not spans:
        return []
    where = SourceLoc(info.path, spans[0][0], 1)
    return [make("C2N4026", where, lines=pathscan.describe(spans), points=n)]


_NARROW = re.compile(r"\b(bfloat16|bf16|float8\w*|fp8\w*|float16|fp16|tfloat32)\b")


def narrowing(port_text: str) -> bool:
    """Whether the port's text names a dtype narrower than float32 (a bf16/fp8/fp16 tile,
    cast or matmul): only then can a difference be precision loss rather than a defect."""
    code = "\n".join(ln.split("#", 1)[0] for ln in port_text.splitlines())
    try:
        import ast

        doc = ast.get_docstring(ast.parse(port_text)) or ""
    except SyntaxError:
        doc = ""
    if doc:
        code = code.replace(doc, "")
    return bool(_NARROW.search(code))


def _label(r: Resolved) -> str:
    return ",".join(f"{k}={v}" for k, v in r.scalars.items())


def _match_outputs(outs: Any, pb: PortBinding, info: portscan.PortInfo) -> dict[str, np.ndarray]:
    if isinstance(outs, Mapping):
        return {c: outs.get(c, outs.get(_pyname(c))) for c in pb.outputs}
    return {c: a for c, a in zip(pb.outputs, outs)}


def _tolerance(
    intent: Any,
    arrays: dict[str, np.ndarray],
    r: Resolved,
    name: str,
    dtype: str,
    expected: np.ndarray,
    idiom: str | None,
    found: list[Diagnostic],
    first: bool,
    oracle64: np.ndarray | None = None,
    memo: dict[str, Any] | None = None,
) -> Tolerance:
    """IR-derived bound, else the per-dtype default widened by the kernel's fp32-vs-fp64 error."""
    tol = derived_tolerance(intent, arrays, dict(r.scalars), name, dtype, memo)
    if tol is not None:
        return tol
    k = _reduction_len(r, idiom)
    reason = "kernel not lifted to IR" if intent is None else "the IR gives no bound for it"
    if oracle64 is not None and dtype in ("float32", "float64"):
        tol = empirical_tolerance(expected, oracle64, dtype, k)
        reason += (
            "; widened by the CUDA kernel's own float32-vs-float64 error on each input set "
            "(tolerance source fp64-run)"
        )
    else:
        tol = default_tolerance(expected, dtype, k, reason)
    if first:
        found.append(
            make(
                "C2N4013",
                SourceLoc(r.binding.path, 1, 1),
                output=name,
                reason=reason,
                dtype=dtype,
                rtol=tol.rtol,
                atol=tol.atol,
            )
        )
    return tol


def _reduction_len(r: Resolved, idiom: str | None) -> int | None:
    if idiom in (None, "map", "elementwise", "transpose", "gather"):
        return None
    ins = [r.shapes[t.name] for t in r.binding.tensors if t.role in ("in", "inout")]
    return max((max(s) for s in ins if s), default=None)


def _total_bytes(r: Resolved) -> int:
    """Bytes of every tensor of the kernel at ``r``: the size that picks the point whose trace
    the performance findings read."""
    return sum(int(np.prod(r.shapes[t.name])) * t.np_dtype.itemsize for t in r.binding.tensors)


def _problem_size(r: Resolved, idiom: str | None, intent: Any = None) -> tracefind.ProblemSize:
    shapes = [(r.shapes[t.name], t.np_dtype.itemsize, t.role) for t in r.binding.tensors]
    # the rows a port can spread over partitions are the output's (a gather from a 50k-row table
    # into 21 rows has 21 rows of work)
    gather = idiom in ("gather", "embedding", "scatter")
    rows = max((s[0] for s, _, role in shapes if s and (role != "in" or not gather)), default=1)
    # and no more than the kernel's independent rows of work (16 segments of a block-wise scan)
    work = work_rows(intent, r.scalars)
    if work is not None:
        rows = min(rows, max(1, work))
    # and the work of a gather is the elements it writes, not the size of the table it picks
    # them from (one probability per row out of a 50k-column matrix is a vector of work)
    sized = [x for x in shapes if x[2] != "in"] if gather else shapes
    big = max((int(np.prod(s)) * isz for s, isz, _ in sized or shapes), default=0)
    elems = max((int(np.prod(s)) for s, _, _ in sized or shapes), default=0)
    reuse = 1.0
    if idiom in tracefind.CONTRACTION_IDIOMS:
        outs = [s for s, _, role in shapes if role != "in" and s]
        reuse = float(max((max(-(-s[0] // 128), -(-s[-1] // 512)) for s in outs), default=1))
    total = _total_bytes(r)
    # bytes a DMA could move per partition if the largest tensor were spread over 128 partitions
    pe_reuse = contraction_reuse(intent, r.scalars, r.shapes) if intent is not None else None
    return tracefind.ProblemSize(rows, big // 128, total, idiom, elems, reuse, pe_reuse)


def _output_layout(
    got: np.ndarray,
    cname: str,
    r: Resolved,
    info: portscan.PortInfo,
    wide: set[str] | frozenset[str] = frozenset(),
) -> list[Diagnostic]:
    """The port's output against the CUDA buffer's dtype and shape (the binding's), before values
    are compared: a different dtype (C2N4021), or the same number of elements in another shape
    (C2N4010; a different number is the comparison's shape defect)."""
    loc = SourceLoc(info.path, info.line, 1)
    out = []
    want = r.dtype(cname)
    have = np.asarray(got).dtype
    stored = storagedtype.stored_as(want, have)  # NKI stores a bool as uint8 0/1
    if have != want and not stored and not narrowed.accepted_dtype(cname, wide, have):
        out.append(
            make("C2N4021", loc, output=cname, got=_dtype_name(have), expected=_dtype_name(want))
        )
    shape = tuple(r.shapes[cname])
    have_shape = tuple(np.shape(got))
    same_size = int(np.prod(have_shape)) == int(np.prod(shape))
    squeezed = tuple(d for d in have_shape if d != 1) == tuple(d for d in shape if d != 1)
    if same_size and not squeezed:
        out.append(
            make(
                "C2N4010",
                loc,
                output=cname,
                evidence=f"port output has shape {have_shape}, the CUDA buffer is {shape} "
                "(same number of elements; values compared in row-major order)",
            )
        )
    return out


def _own_rounding(
    c: Comparison, got: np.ndarray, ref: np.ndarray, exact: np.ndarray | None, tol: Tolerance
) -> Comparison:
    """``c`` as expected variation when the port is as close to the fp64 evaluation of the CUDA
    kernel (``exact``) as the tolerance allows once the CUDA kernel's own rounding is added to it
    (its fp32 summation order, a large term folded into a running sum): a port more accurate than
    the CUDA kernel is not a defect."""
    from cuda2nki.fidelity.compare import within

    if exact is None or np.size(exact) != np.size(ref) or np.size(got) != np.size(ref):
        return c
    e = np.asarray(ref, dtype=np.float64)
    x = np.asarray(exact, dtype=np.float64).reshape(e.shape)
    g = np.asarray(got, dtype=np.float64).reshape(e.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        own = np.abs(e - x)
    own = np.where(np.isfinite(own), own, 0.0)
    if not within(g, x, np.asarray(tol.bound, dtype=np.float64) + own).all():
        return c
    with np.errstate(invalid="ignore", over="ignore"):
        port_err = float(np.nanmax(np.abs(g - x), initial=0.0))
    return dataclasses.replace(
        c,
        classification="expected",
        defect=None,
        evidence=f"{c.evidence}; but the port is within the tolerance of the fp64 evaluation of "
        f"the CUDA kernel once the kernel's own rounding is counted (the fp32 CUDA kernel is off "
        f"the fp64 one by up to {float(own.max(initial=0.0)):.3g}, the port by {port_err:.3g}): "
        "the difference is the CUDA kernel's error, not the port's",
    )


def _dtype_name(dt: np.dtype) -> str:
    from cuda2nki.binding import dtype_name

    try:
        return dtype_name(dt)
    except (KeyError, ValueError, TypeError):
        return str(dt)


def _same_kind(got: np.ndarray, r: Resolved, cname: str) -> bool:
    """Both floating point (ml_dtypes' bf16/fp8 are kind 'V'), or both integer/boolean."""

    def is_float(dt: np.dtype) -> bool:
        return dt.kind in "fV"

    return is_float(np.asarray(got).dtype) == is_float(r.dtype(cname))


def _memory_findings(
    diags: list[Diagnostic], entry: dict[str, Any], info: portscan.PortInfo, label: str
) -> list[Diagnostic]:
    """A port that ran out of host memory (MemoryError under the sandbox's address-space limit,
    raised by the kernel or while loading it) is reported as exhausting memory (C2N4016)."""
    texts = [d.message for d in diags] + [str(entry.get("error") or "")]
    if not any("MemoryError" in t for t in texts):
        return []
    line = next((d.loc.line for d in diags if Path(d.loc.file).name == Path(info.path).name), None)
    reason = next(t for t in texts if "MemoryError" in t)
    loc = SourceLoc(info.path, line or entry.get("line") or info.line, 1)
    return [make("C2N4016", loc, point=label, reason=reason)]


def _capacity_findings(diags: list[Diagnostic]) -> list[Diagnostic]:
    """An on-chip capacity violation from the simulator is also a budget finding (C2N5012)."""
    out = []
    for d in diags:
        if d.code in ("C2N3017", "C2N3018"):
            out.append(make("C2N5012", d.loc, evidence=d.message))
            break
    return out


def _numeric_entry(
    c: Comparison, label: str, seed: int, dist: str, tol: Tolerance
) -> dict[str, Any]:
    d = c.to_dict()
    d.update({"shape": label, "seed": seed, "distribution": dist, "tolerance_source": tol.source})
    return d


def _finding(
    c: Comparison,
    info: portscan.PortInfo,
    label: str,
    where: str = "",
    cause: rootcause.Cause | None = None,
    stores: Sequence[SourceLoc] = (),
) -> Diagnostic:
    """A numeric finding: on the port line the root cause names (else the kernel's line); its
    notes say why, and point at the CUDA lines that store the output (``stores``), so a reader
    (and code scanning) can jump to the CUDA side."""
    loc = SourceLoc(info.path, cause.line if cause is not None else info.line, 1)
    shape = f"shape {label}"
    notes: list[Any] = []
    if where:
        notes.append(
            Note(f"in the CUDA kernel these elements are {where}", stores[0] if stores else None)
        )
    elif stores:
        notes.append(Note(f"the CUDA kernel stores '{c.name}' here", stores[0]))
    notes.extend(Note(f"the CUDA kernel also stores '{c.name}' here", at) for at in stores[1:3])
    if cause is not None:
        notes = [*cause.notes(), *notes]
    if c.tiles and c.classification != "precision":
        shown = ", ".join(f"({p}, {f})" for p, f in c.tiles[:8])
        more = f" and {len(c.tiles) - 8} more" if len(c.tiles) > 8 else ""
        notes.insert(0, f"port tiles (partition tile of 128, free tile of 512): {shown}{more}")
    if c.classification == "precision":
        return make("C2N4002", loc, notes=notes, output=c.name, shape=shape, evidence=c.evidence)
    code = _DEFECT_IDS.get(c.defect or "", "C2N4001")
    if cause is not None and cause.mechanism is not None and cause.mechanism.name in _LITERAL:
        code = "C2N4001"  # the pattern (tiles, scale) is the literal's effect, not a layout bug
    return make(code, loc, notes=notes, output=c.name, shape=shape, evidence=c.evidence)


#: mechanisms that explain a wrong output by a literal (``constants.py``)
_LITERAL = ("changed constant", "eps misplaced")


def _root_cause(
    tu: Any,
    name: str,
    r: Resolved,
    entry: Mapping[str, Any],
    pb: PortBinding,
    cname: str,
    got: np.ndarray,
    expected: np.ndarray,
    tol: Tolerance,
    arrays: dict[str, np.ndarray],
    c: Comparison,
    loops: Mapping[int, tuple[str, ...]],
    source: CudaSource | None = None,
    port_text: str = "",
    variant: PortVariant | None = None,
) -> rootcause.Cause | None:
    """The port line, loop iteration and mechanism behind the wrong elements of ``cname``."""
    from cuda2nki.fidelity.compare import within

    writers = entry.get("writers")
    if writers is None:
        return None
    outs = entry.get("outputs")
    if isinstance(outs, Mapping):
        keys = list(outs)
        pname = cname if cname in keys else _pyname(cname)
        index = keys.index(pname) if pname in keys else -1
    else:
        index = pb.outputs.index(cname)
    e = np.asarray(expected, dtype=np.float64)
    g = np.asarray(got, dtype=np.float64)
    if index < 0 or g.size != e.size:
        return None
    g = g.reshape(e.shape)
    bad = ~within(g, e, tol.bound)
    cause = rootcause.localise(writers, index, bad, loops)
    if cause is None:
        return None

    def rerun(inputs: Mapping[str, np.ndarray]) -> np.ndarray | None:
        try:
            return _reference(tu, name, r, dict(inputs))[0][cname]
        except DiagnosticError:
            return None

    axis = c.evidence if c.defect == "wrong_axis" else ""
    bound = np.broadcast_to(np.asarray(tol.bound, dtype=np.float64), e.shape)
    extra = _literal_tests(
        source, port_text, name, r, arrays, cname, cause, g, e, bad, bound, variant
    )
    names = rootcause.name_reads(port_text)
    reads = {c: names.get(c, frozenset()) | names.get(_pyname(c), frozenset()) for c in arrays}
    acc = rootcause.accumulations(port_text)
    for n in acc.values():
        reads[n] = reads.get(n, frozenset()) | names.get(n, frozenset())
    return rootcause.diagnose(
        cause, writers, index, g, e, bad, bound, arrays, axis, rerun, extra, reads, acc
    )


def _literal_tests(
    source: CudaSource | None,
    port_text: str,
    name: str,
    r: Resolved,
    arrays: dict[str, np.ndarray],
    cname: str,
    cause: rootcause.Cause,
    got: np.ndarray,
    expected: np.ndarray,
    bad: np.ndarray,
    bound: np.ndarray,
    variant: PortVariant | None,
) -> list[Any]:
    """The changed-constant and eps-misplaced tests: re-runs of the CUDA kernel re-parsed with
    one literal replaced, and of the port (``variant``) with eps changed (nothing when the CUDA
    text or the port's runner is unknown)."""
    from cuda2nki.fidelity import constants

    if source is None or not port_text or variant is None:
        return []
    src = source

    def rerun_port(eps: constants.Eps, value: float) -> np.ndarray | None:
        if eps.port_param:
            return variant(port_text, r, arrays, {eps.port_param: value}).get(cname)
        return variant(constants.port_replaced(port_text, eps.value, value), r, arrays).get(cname)

    scalars = {
        c: (p, float(r.scalars[c]))
        for p, c in variant.pb.scalars.items()
        if isinstance(r.scalars.get(c), float)
    }

    def rerun_source(text: str, rr: Resolved = r) -> np.ndarray | None:
        try:
            return _reference(src.parse(text), name, rr, dict(arrays))[0][cname]
        except Exception:  # noqa: BLE001 - a re-run that fails is a hypothesis not confirmed
            return None

    def rerun_cuda(eps: constants.Eps, value: float) -> np.ndarray | None:
        if eps.port_param:  # a scalar parameter: the same source at another value
            return rerun_source(
                src.text, dataclasses.replace(r, scalars={**r.scalars, eps.text: value})
            )
        return rerun_source(constants.replaced(src.text, eps.value, value))

    def remembered(kind: str, test: Callable[[], constants.Explanation | None]) -> Any:
        def run() -> rootcause.Mechanism | None:
            if kind not in variant.found:  # found once, it explains every point of the check
                x = test()
                if x is None:
                    return None
                variant.found[kind] = rootcause.Mechanism(x.name, x.line, x.evidence, x.advice)
            return variant.found[kind]

        return run

    return [
        remembered(
            "constant",
            lambda: constants.changed_constant(
                got, bound, src.text, port_text, rerun_source, dict(r.scalars)
            ),
        ),
        remembered(
            "eps",
            lambda: constants.eps_misplaced(
                got,
                bad,
                bound,
                src.text,
                port_text,
                cause.chain,
                constants.eps_candidates(src.text, port_text, scalars),
                rerun_port,
                rerun_cuda,
                expected,
            ),
        ),
    ]


def _stores(tu: Any, name: str, cname: str, cache: dict[str, Any]) -> list[SourceLoc]:
    from cuda2nki.fidelity.writers import store_locations

    key = f"stores:{cname}"
    if key not in cache:
        cache[key] = store_locations(tu, name, cname)
    return cache[key]


def _cuda_writers(
    tu: Any,
    name: str,
    r: Resolved,
    arrays: dict[str, np.ndarray],
    outputs: list[str],
    cname: str,
    got: np.ndarray,
    expected: np.ndarray,
    tol: Tolerance,
    cache: dict[str, Any],
    label: str,
) -> str:
    """The CUDA blocks/threads that wrote the mismatching elements (once per shape)."""
    from cuda2nki.fidelity.compare import within
    from cuda2nki.fidelity.writers import describe, writer_maps

    if label not in cache:
        cache[label] = writer_maps(tu, name, r, arrays, outputs)
    maps = cache[label]
    if not maps or cname not in maps:
        return ""
    e = np.asarray(expected, dtype=np.float64)
    if np.asarray(got).size != e.size:
        return ""
    bad = ~within(np.asarray(got, dtype=np.float64).reshape(e.shape), e, tol.bound)
    blocks, threads = maps[cname]
    return describe(blocks.reshape(e.shape), threads.reshape(e.shape), bad, r.grid)


def _run_failure(
    entry: dict[str, Any], info: portscan.PortInfo, label: str, given: str = ""
) -> list[Diagnostic]:
    """The port's failure; ``given`` (what it was called with) is added as a note, so a port that
    expects other shapes or dtypes than the CUDA binding's says so next to its error."""
    notes = (f"the port was called with {given}",) if given else ()
    if entry.get("diagnostics"):
        return [
            dataclasses.replace(d, notes=(*d.notes, *notes)) if i == 0 else d
            for i, d in enumerate(entry["diagnostics"])
        ]
    return [
        make(
            "C2N4014",
            SourceLoc(info.path, entry.get("line") or info.line, 1),
            notes=notes,
            point=label,
            reason=entry.get("error", "unknown error"),
        )
    ]


def _given(kwargs: Mapping[str, Any]) -> str:
    """``a: float32[4096], b: float32[4096], alpha=2.5``: the port's arguments, briefly."""
    from cuda2nki.binding import dtype_name

    parts = []
    for k, v in kwargs.items():
        if isinstance(v, np.ndarray):
            parts.append(f"{k}: {dtype_name(v.dtype)}[{', '.join(map(str, v.shape))}]")
        else:
            parts.append(f"{k}={v!r}")
    return ", ".join(parts)


def _determinism(
    a: dict[str, Any], b: dict[str, Any], pb: PortBinding, info: portscan.PortInfo
) -> list[Diagnostic]:
    oa, ob = _match_outputs(a["outputs"], pb, info), _match_outputs(b["outputs"], pb, info)
    out = []
    for c in pb.outputs:
        x, y = oa.get(c), ob.get(c)
        if x is None or y is None or x.shape != y.shape:
            continue
        differ = ~((x == y) | (np.isnan(x.astype(np.float64)) & np.isnan(y.astype(np.float64))))
        if differ.any():
            out.append(
                make(
                    "C2N4011", SourceLoc(info.path, info.line, 1), output=c, count=int(differ.sum())
                )
            )
    return out


__all__ = ["CheckReport", "PortBinding", "bind_port", "check"]
