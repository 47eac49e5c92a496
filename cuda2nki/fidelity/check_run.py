"""Running both sides of a check: the port in its sandbox and the CUDA kernel on every test point
and seed, each output compared and judged, and the trace findings of the largest point.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cuda2nki import fp64, limbs
from cuda2nki.binding import Binding, Number, Resolved
from cuda2nki.diagnostics import Diagnostic, DiagnosticError, SourceLoc, make
from cuda2nki.fidelity import (
    blockorder,
    conditioning,
    layoutscan,
    loopnest,
    narrowed,
    outcap,
    pathscan,
    points,
    portscan,
    provenance,
    recipdiv,
    rootcause,
    tracefind,
    uninit,
)
from cuda2nki.fidelity import traffic as traffic_mod
from cuda2nki.fidelity.check_bind import PortBinding, _match_outputs
from cuda2nki.fidelity.check_causes import PortVariant, _cuda_writers, _root_cause, _stores
from cuda2nki.fidelity.check_findings import (
    _SANDBOX_IDS,
    _capacity_findings,
    _determinism,
    _finding,
    _given,
    _heavy_note,
    _memory_findings,
    _numeric_entry,
    _run_failure,
    _unexecuted,
)
from cuda2nki.fidelity.check_judge import (
    _output_layout,
    _own_rounding,
    _same_kind,
    _tolerance,
    narrowing,
)
from cuda2nki.fidelity.check_reference import CudaSource, _fp64, _ndebug, _reference, _swapped_axes
from cuda2nki.fidelity.compare import (
    Comparison,
    compare,
    largest_finite,
    vacuous,
    wrong_axis,
)
from cuda2nki.fidelity.inputs import DISTRIBUTIONS
from cuda2nki.fidelity.intensity import contraction_reuse
from cuda2nki.fidelity.networkrows import segment_length, with_segments
from cuda2nki.fidelity.oracle import promoted
from cuda2nki.fidelity.parallelism import work_rows
from cuda2nki.fidelity.rerun import Run as Launch
from cuda2nki.fidelity.sandbox import PortSandbox
from cuda2nki.fileio import read_text
from cuda2nki.frontend.demote import demoted
from cuda2nki.nkisim.dtypes import canary_mask
from cuda2nki.simt import deadline

#: how much of what the port printed (its last bytes) a report keeps
PORT_OUTPUT_BYTES = 4000
#: a generated test point at which one run of the port would issue more engine instructions than
#: this (at its pace so far) is skipped with a note (C2N4027)
PORT_INSTRUCTIONS = 20_000
#: what may explain a failed comparison, tried in turn: CUDA's own result hangs on the order of
#: its blocks, it reads memory no thread wrote, or the port divides as x * (1 / y)
_EXPLANATIONS = (blockorder.judged, uninit.judged, recipdiv.judged)


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
    segment = None if intent is not None else segment_length(tu, name, b)  # sorting networks
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
    box.submit(
        jobs, out_elements=[len(runs) * outcap.expected_elements(r) for _, r, _, runs in plan]
    )
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
                deadline.check()  # the time budget of the check, if it has one
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
                if res.status in ("blocked", "timeout", "crash", "output"):
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
                    size = with_segments(_problem_size(r, idiom, intent), r, segment)
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
                outs = limbs.joined(_match_outputs(entry["outputs"], pb, info), r)
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
                        overflow=largest_finite(ref[cname]),
                    )
                    run = Launch(tu, name, r, arrays, SourceLoc(info.path, info.line, 1))
                    for explain in _EXPLANATIONS:
                        if c.ok:
                            break
                        c = explain(c, got, ref[cname], tol, skip.get(cname), run, found)
                    if not c.ok:
                        if oracle is None and intent is not None:
                            if tu64 is None:
                                tu64 = promoted(tu)
                            oracle = _fp64(tu64, name, r, arrays) or {}
                            oracles[si] = oracle
                        c = _own_rounding(c, got, ref[cname], (oracle or {}).get(cname), tol)
                    if not c.ok and tol.source != "ir" and not wide and oracle:
                        c = _conditioned(
                            c, got, ref[cname], oracle, tol, tu, name, r, arrays, cname
                        )
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


def _conditioned(
    c: Comparison,
    got: np.ndarray,
    ref: np.ndarray,
    oracle: dict[str, np.ndarray],
    tol: Any,
    tu: Any,
    name: str,
    r: Resolved,
    arrays: dict[str, np.ndarray],
    cname: str,
) -> Comparison:
    """``c`` settled by the kernel's measured conditioning (:mod:`.conditioning`) where no IR
    bound exists: fp64 runs on inputs moved by one fp32 ulp."""
    tu64 = promoted(tu)
    inputs = {t.name for t in r.binding.tensors if t.role != "out"}
    sens = conditioning.sensitivity(
        lambda x: _fp64(tu64, name, r, x), arrays, inputs, cname, oracle.get(cname)
    )
    return conditioning.settle(c, got, ref, oracle.get(cname), tol.bound, sens)


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


def _label(r: Resolved) -> str:
    return ",".join(f"{k}={v}" for k, v in r.scalars.items())


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
