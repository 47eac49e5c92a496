"""The reviewer's assessment of a port (``cuda2nki review``), as Markdown or a self-contained HTML page.

Sections follow the rubric a senior reviewer uses -- migration fidelity, tiling and partitioning,
memory hierarchy, DMA and data movement, numerics and precision, performance -- and every claim
quotes a measured figure from the check report (numerics, instruction trace, cost model).  The HTML
page shows the CUDA kernel and the port side by side, port lines linked to the CUDA lines their
``# from kernel.cu:LINE`` comments name, findings marked on their lines, and a heatmap of mismatches
per (partition tile, free tile).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuda2nki.diagnostics import rules

_SEV_ORDER = {"error": 0, "warning": 1, "note": 2}
_FROM = re.compile(r"#\s*from\s+\S+?:(\d+)")


def _fmt(x: Any, digits: int = 3) -> str:
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def sections(
    report: dict[str, Any], generated: dict[str, Any] | None = None
) -> list[tuple[str, list[str]]]:
    """The rubric: (title, claims) pairs; each claim cites a figure."""
    t = report.get("trace") or {}
    prof = t.get("profile") or {}
    ids = {f["id"] for f in report["findings"]}
    num = [n for n in report["numerics"] if n.get("output") != "*"]
    failed = [n for n in report["numerics"] if n.get("classification") != "expected"]
    out: list[tuple[str, list[str]]] = []

    fid = [
        f"Verdict **{report['verdict'].upper()}**: {len(num) - len([n for n in failed if n.get('output') != '*'])} "
        f"of {len(num)} output comparisons within the derived tolerance"
        f" ({len({n['shape'] for n in report['numerics']})} shapes × seeds)."
    ]
    for n, seeds in _by_shape(failed)[:5]:
        on = f"{n['shape']} ({_seeds_text(seeds)})"
        if n.get("output") == "*":
            fid.append(f"The port failed to run on {on}: {n.get('evidence', '')}.")
        else:
            fid.append(
                f"`{n['output']}` on {on}: {n['classification']}"
                f"{' (' + n['defect'] + ')' if n.get('defect') else ''}, {n['mismatch_pct']:.3g}% of elements "
                f"off, max abs error {_fmt(n['max_abs_error'])} vs tolerance {_fmt(n['tolerance_max'])}; "
                f"{n.get('evidence', '')}"
            )
    out.append(("Migration fidelity", fid))

    util = t.get("partition_utilisation")
    tiling = []
    if util is not None:
        tiling.append(
            f"Engine instructions use {100 * util:.0f}% of the 128 partitions on average."
        )
    if "C2N5001" in ids or "C2N5010" in ids:
        tiling.append(
            "The port is a literal per-thread translation (C2N5001/C2N5010): CUDA threads became "
            "single elements instead of 128-partition tiles."
        )
    if "C2N5011" in ids:
        tiling.append(
            "CUDA's warp structure is carried over (C2N5011): halving shuffle steps, 32-lane loops "
            "or 32-partition tiles where one engine instruction on 128 partitions would do."
        )
    if "C2N5003" in ids or any(n.get("defect") == "tail" for n in failed):
        tiling.append("Sizes that are not multiples of the tile are not handled (C2N5003/C2N4004).")
    if not tiling:
        tiling.append("No trace available (static-only review).")
    out.append(("Tiling and partitioning", tiling))

    mem = []
    for key, label in (
        ("peak_sbuf_bytes_per_partition", "peak SBUF"),
        ("peak_psum_bytes_per_partition", "peak PSUM"),
    ):
        if key in prof:
            mem.append(f"{label}: {prof[key]} bytes per partition.")
    if "peak_psum_banks" in prof:
        mem.append(f"PSUM banks in use at peak: {prof['peak_psum_banks']} of 8.")
    if "C2N5004" in ids:
        mem.append("Accumulation in a narrow dtype (C2N5004): PSUM should accumulate in fp32.")
    if "C2N5012" in ids or any(i in ("C2N3017", "C2N3018") for i in ids):
        mem.append("The port exceeds the on-chip capacity of the target (see findings).")
    out.append(
        ("Memory hierarchy (SBUF/PSUM)", mem or ["No SBUF/PSUM figures (static-only review)."])
    )

    dma = []
    if t:
        dma.append(
            f"{t.get('dma_count', 0)} DMA transfers moving {t.get('dma_bytes', 0)} bytes, "
            f"{_fmt(t.get('avg_dma_bytes_per_partition', 0.0))} B per partition row on average "
            f"(≥ 2 KiB recommended where the problem allows)."
        )
    if t.get("needed_bytes") and t.get("dma_bytes"):
        dma.append(
            f"The computation needs {int(t['needed_bytes']):,} bytes (what the CUDA kernel reads "
            f"and writes): the port moves {float(t['dma_bytes']) / float(t['needed_bytes']):.3g}× "
            "that" + (" (C2N5014)." if "C2N5014" in ids else ".")
        )
    if "C2N5007" in ids:
        dma.append("DMAs are small (C2N5007).")
    if "C2N5006" in ids:
        dma.append("The same data is reloaded inside a loop (C2N5006).")
    out.append(("DMA and data movement", dma or ["No trace available."]))

    numerics = [f"Tolerance derived from: {report['tolerance_source']}."]
    if num:
        worst = max(num, key=lambda n: n["max_abs_error"] / max(n["tolerance_max"], 1e-300))
        numerics.append(
            f"Worst comparison: `{worst['output']}` on {worst['shape']} ({worst.get('distribution', '')}), "
            f"max abs {_fmt(worst['max_abs_error'])} = {worst['max_abs_error'] / max(worst['tolerance_max'], 1e-300):.2g}× "
            f"the tolerance, normwise {_fmt(worst['normwise_error'])}."
        )
    if "C2N4021" in ids:
        numerics.append(
            "An output is returned in another dtype than the CUDA buffer it stands for (C2N4021)."
        )
    if "C2N4010" in ids:
        numerics.append("An output's shape differs from the CUDA buffer's (C2N4010).")
    if any(n.get("classification") == "precision" for n in num) or "C2N4002" in ids:
        numerics.append("Precision loss: the error fits a bf16 bound, not the fp32 one (C2N4002).")
    out.append(("Numerics and precision", numerics))

    perf = []
    est_us = float(prof["overlapped_ns"]) / 1000.0 if "overlapped_ns" in prof else None
    if est_us is not None:
        serial = float(prof.get("serialised_ns", 0.0)) / 1000.0
        perf.append(
            f"Cost model: {_fmt(est_us)} µs with engines overlapped ({_fmt(serial)} µs serialised), "
            f"bottleneck engine: {prof.get('bottleneck', 'n/a')}."
        )
        roof = roofline_us(prof, t)
        if roof:
            perf.append(
                f"Roofline bound {_fmt(roof)} µs ({_roofline_basis(t, prof)}): the port runs at "
                f"{_percent(roof / max(est_us, 1e-12))} of it."
            )
    if prof.get("matmul_flops") and "pe_fill" in prof:
        perf.append(f"Tensor-engine PE-array fill: {100 * float(prof['pe_fill']):.0f}%.")
    if generated and generated.get("time_us") and est_us:
        ratio = est_us / float(generated["time_us"])
        perf.append(
            f"cuda2nki's own port of this kernel is estimated at {_fmt(float(generated['time_us']))} µs: "
            f"this port takes {ratio:.2g}× that."
        )
    if "C2N5002" in ids:
        perf.append(
            "The contraction runs on the vector engine instead of the tensor engine (C2N5002)."
        )
    if "C2N5009" in ids:
        perf.append(
            "The tensor engine spends time on transposes that do no useful work (C2N5009): the "
            "same block transposed on every iteration of a loop, or a transpose undone later."
        )
    out.append(("Performance", perf or ["No cost-model figures (static-only review)."]))
    return out


def _by_shape(runs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[Any]]]:
    """Comparisons grouped by (shape, output), seeds merged: the worst run of each group (by
    error over tolerance) and the seeds of the group, in first-seen order."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for n in runs:
        groups.setdefault((n["shape"], n.get("output", "")), []).append(n)
    return [(max(g, key=_ratio), [n.get("seed", 0) for n in g]) for g in groups.values()]


def _seeds_text(seeds: list[Any]) -> str:
    return f"seed {seeds[0]}" if len(seeds) == 1 else "seeds " + ", ".join(map(str, seeds))


#: trn2 per-NeuronCore peaks (NKI.md §10.1, §10.3): DMA bytes per µs, fp32 tensor-engine flops per µs
_DMA_BYTES_PER_US = 368e3
_TENSOR_FP32_FLOP_PER_US = 20e6


def roofline_work(prof: dict[str, Any], trace: dict[str, Any]) -> tuple[float, float, bool]:
    """(bytes, flops, of the kernel): the work the roofline is drawn for.  The kernel's own
    minimum where the check measured it -- the bytes the CUDA kernel reads and writes, the flops
    of its contractions -- so that every port of a kernel meets the same bound and one that
    moves or computes more than needed is the less efficient for it; the port's own DMA bytes
    and matmul flops only for a report without those figures."""
    if trace.get("needed_bytes"):
        return float(trace["needed_bytes"]), float(trace.get("kernel_flops") or 0), True
    return float(trace.get("dma_bytes") or 0), float(prof.get("matmul_flops") or 0), False


def roofline_us(prof: dict[str, Any], trace: dict[str, Any]) -> float | None:
    """Lower bound on time: bytes at peak DMA bandwidth vs contraction flops at tensor-engine
    peak, for the work of :func:`roofline_work`."""
    moved, flops, _ = roofline_work(prof, trace)
    if not moved and not flops:
        return None
    return max(moved / _DMA_BYTES_PER_US, flops / _TENSOR_FP32_FLOP_PER_US)


def _percent(x: float) -> str:
    """A fraction as a percentage: whole percents, two significant digits below 1%."""
    pct = 100 * x
    return f"{pct:.0f}%" if pct >= 1 else f"{pct:.2g}%"


def _roofline_basis(trace: dict[str, Any], prof: dict[str, Any]) -> str:
    moved, flops, kernel = roofline_work(prof, trace)
    if not kernel:
        return (
            "the port's HBM traffic at peak DMA bandwidth, its matmul flops at tensor-engine peak"
        )
    text = f"the kernel's minimum traffic, {moved:,.0f} bytes, at peak DMA bandwidth"
    if flops:
        text += (
            f"; its {flops:,.0f} contraction flops (from the "
            f"{trace.get('kernel_flops_from') or 'intent'}) at tensor-engine peak"
        )
    return text


def recommendations(report: dict[str, Any], generated: dict[str, Any] | None = None) -> list[str]:
    """What to change, by priority: each finding with the advice its diagnosed mechanism gives
    (the rule's general fix where none was diagnosed), then what the review's own figures call
    for when no finding already covers them (low partition use, a cost several times cuda2nki's
    own port's)."""
    table = rules()
    recs, seen = [], set()
    if report.get("verdict") == "unverified":  # static-only: nothing ran, nothing is vouched for
        recs.append(
            "Run the check without --static-only: the port's numbers were not compared, so "
            "this review cannot say whether it is faithful."
        )
    for f in sorted(report["findings"], key=lambda f: _SEV_ORDER.get(f["severity"], 3)):
        if f["id"] in seen or f["severity"] == "note":
            continue
        seen.add(f["id"])
        fix = _advice(f) or (table[f["id"]].fix if f["id"] in table else "")
        recs.append(
            f"[{f['severity']}] line {f['line']}: {f['message']} [{f['id']}]"
            + (f" -- {fix}" if fix else "")
        )
    return recs + _figure_recommendations(report, generated, seen)


def _advice(finding: dict[str, Any]) -> str:
    """The advice a finding's diagnosed root cause gives (its ``advice:`` note), if any."""
    for n in finding.get("notes") or ():
        if isinstance(n, str) and n.startswith("advice: "):
            return n.removeprefix("advice: ")
    return ""


#: partition use below this, with no finding about the layout, is itself a recommendation
LOW_PARTITION_USE = 0.25
#: a cost this many times cuda2nki's own port's is itself a recommendation
COSTLY = 3.0


def _figure_recommendations(
    report: dict[str, Any], generated: dict[str, Any] | None, seen: set[str]
) -> list[str]:
    t = report.get("trace") or {}
    prof = t.get("profile") or {}
    out = []
    use = t.get("work_partition_use", t.get("partition_utilisation"))
    layout_ids = {"C2N5001", "C2N5008", "C2N5010", "C2N5011"}
    if use is not None and float(use) < LOW_PARTITION_USE and not seen & layout_ids:
        out.append(
            f"[figure] engine instructions use {100 * float(use):.0f}% of the 128 partitions: "
            "lay the independent rows (or the flattened elements) over all 128 partitions, in "
            "[128, F] tiles, so each instruction does 128 lanes' work"
        )
    est = float(prof["overlapped_ns"]) / 1000.0 if "overlapped_ns" in prof else None
    gen = float(generated["time_us"]) if generated and generated.get("time_us") else None
    if est is not None and gen and est >= COSTLY * gen:
        where = prof.get("bottleneck")
        out.append(
            f"[figure] the port's estimated cost is {est / gen:.2g}x cuda2nki's own port's "
            f"({_fmt(est)} us vs {_fmt(gen)} us)"
            + (f", bound by the {where} engine" if where else "")
            + ": compare its tiling and engine choice with `cuda2nki port`'s output for the "
            "same kernel"
        )
    return out


def to_markdown(report: dict[str, Any], generated: dict[str, Any] | None = None) -> str:
    lines = [
        f"# Review: {report['port_kernel']} (port of CUDA `{report['kernel']}`)",
        "",
        f"**Verdict: {report['verdict'].upper()}** · CUDA `{report['cuda_file']}` · port `{report['port_file']}` "
        f"({report['api']} API)",
        "",
    ]
    for title, claims in sections(report, generated):
        lines += [f"## {title}", ""] + [f"- {c}" for c in claims] + [""]
    lines += ["## Recommendations (by priority)", ""]
    recs = recommendations(report, generated)
    lines += (
        [f"{i}. {r}" for i, r in enumerate(recs, 1)]
        if recs
        else ["None: the port is faithful and idiomatic."]
    )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- HTML

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em 1.5em;color:#222;max-width:1400px}
h1{font-size:1.5em;overflow-wrap:anywhere} h3{overflow-wrap:anywhere;font-size:1em}
li,p{overflow-wrap:anywhere} td,th{overflow-wrap:break-word}
.verdict{font-size:1.4em;font-weight:bold;padding:.3em .6em;display:inline-block;border-radius:4px}
.pass{background:#d4edda}.fail{background:#f8d7da}.unverified{background:#fff3cd}
.scroll{overflow-x:auto;max-width:100%}
table.f{border-collapse:collapse;width:100%} table.f td,table.f th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
table.f th{background:#f0f0f0} tr.bad td{background:#fdf0f0} td.prose{min-width:16em}
.sev-error{color:#a00;font-weight:600}.sev-warning{color:#8a5a00}
.charts{display:flex;flex-wrap:wrap;gap:1em}
.charts section{flex:1 1 560px;min-width:0}
figure.chart{margin:0} figure.chart svg{max-width:100%;height:auto;display:block;font-family:system-ui,sans-serif}
figure.chart .axis text{fill:#333} figcaption{font-size:.85em;color:#555}
.code{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1em}
@media (max-width:1000px){.code{grid-template-columns:minmax(0,1fr)}}
pre{background:#f7f7f7;padding:.5em;overflow:auto;font-size:12px;line-height:1.4;max-height:80vh;margin:0}
pre span.ln{display:block;white-space:pre} pre span.ln:target{background:#fff3b0}
pre span.hit{background:#fde2e2} .lno{color:#999;display:inline-block;width:3.5em;user-select:none}
"""


@dataclass(frozen=True)
class CodeLine:
    number: int
    id: str
    cls: str
    title: str
    spans: tuple[Any, ...]
    link: int | None


@dataclass(frozen=True)
class Pane:
    path: str
    lines: tuple[CodeLine, ...]


@dataclass(frozen=True)
class ShapeRow:
    shape: str
    output: str
    seeds: str
    distributions: str
    result: str
    mismatch: str
    max_abs: str
    tolerance: str
    evidence: str
    cls: str


def pane(
    path: str | Path,
    text: str,
    language: str,
    prefix: str,
    hits: dict[int, str],
    links: dict[int, int] | None = None,
) -> Pane:
    """A source file as highlighted, numbered lines; ``hits`` marks lines with findings,
    ``links`` points port lines at CUDA lines."""
    from cuda2nki.report import highlight

    rows = tuple(
        CodeLine(
            i,
            f"{prefix}-{i}",
            "ln hit" if i in hits else "ln",
            hits.get(i, ""),
            tuple(spans),
            (links or {}).get(i),
        )
        for i, spans in enumerate(highlight.lines(text, language), 1)
    )
    return Pane(str(path), rows)


_CLASS_ORDER = {"defect": 0, "layout": 1, "precision": 2, "expected": 9}


def shape_rows(report: dict[str, Any]) -> list[ShapeRow]:
    """One row per (shape, output): its seeds merged, the worst seed's figures shown."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for n in report["numerics"]:
        groups.setdefault((n["shape"], n.get("output", "")), []).append(n)
    rows = []
    for (shape, output), runs in groups.items():
        worst = min(
            runs,
            key=lambda n: (
                _CLASS_ORDER.get(n.get("classification", ""), 5),
                -_ratio(n),
            ),
        )
        ok = all(n.get("classification") == "expected" for n in runs)
        result = worst.get("classification", "")
        if worst.get("defect"):
            result += f" ({worst['defect']})"
        bad = [n for n in runs if n.get("classification") != "expected"]
        rows.append(
            ShapeRow(
                shape,
                "(the port did not run)" if output == "*" else output,
                ", ".join(str(n.get("seed", "")) for n in runs),
                ", ".join(dict.fromkeys(str(n.get("distribution", "")) for n in runs)),
                "within tolerance" if ok else f"{result}: {len(bad)} of {len(runs)} seeds",
                f"{float(worst.get('mismatch_pct', 0.0)):.3g}%" if "mismatch_pct" in worst else "",
                _fmt(worst["max_abs_error"]) if "max_abs_error" in worst else "",
                _fmt(worst["tolerance_max"]) if "tolerance_max" in worst else "",
                "" if ok else str(worst.get("evidence", "")),
                "" if ok else "bad",
            )
        )
    return rows


def _ratio(n: dict[str, Any]) -> float:
    try:
        return float(n["max_abs_error"]) / max(float(n["tolerance_max"]), 1e-300)
    except (KeyError, TypeError, ValueError):
        return 0.0


def heatmap(report: dict[str, Any]) -> tuple[Any, str] | None:
    """The SVG heatmap of the comparison with the most mismatches, and its caption."""
    from cuda2nki.report import charts

    grids = [n for n in report["numerics"] if n.get("tile_grid")]
    if not grids:
        return None
    n = max(grids, key=lambda n: n["mismatches"])
    caption = (
        f"Output {n['output']} at {n['shape']} (seed {n.get('seed', 0)}): mismatching elements "
        "per tile of 128 partitions × 512 columns."
    )
    return charts.heatmap(n["tile_grid"], title=f"Mismatches per tile of {n['output']}"), caption


def engine_chart(report: dict[str, Any]) -> tuple[Any, str] | None:
    from cuda2nki.report import charts

    t = report.get("trace") or {}
    prof = t.get("profile") or {}
    chart = charts.engine_bars(prof.get("time_ns") or {})
    if chart is None:
        return None
    return chart, (
        f"Busy time of each engine by the cost model at {t.get('shape', 'the largest shape')}; "
        f"bottleneck: {prof.get('bottleneck', 'n/a')}."
    )


def roofline_chart(report: dict[str, Any]) -> tuple[Any, str] | None:
    """The port on a trn2 roofline: arithmetic intensity (matmul flops per DMA byte) against
    the flop rate its cost-model time gives; without matmul flops it sits at the chart's left
    edge, at the bandwidth it achieves."""
    from cuda2nki.report import charts

    t = report.get("trace") or {}
    prof = t.get("profile") or {}
    moved, flops, kernel = roofline_work(prof, t)
    time_us = float(prof.get("overlapped_ns") or 0) / 1000.0
    if not moved or time_us <= 0:
        return None
    bw = _DMA_BYTES_PER_US / 1e3  # GB/s
    peak = _TENSOR_FP32_FLOP_PER_US / 1e3  # GFLOP/s
    achieved_gbs = moved / time_us / 1e3
    whose = "the kernel's" if kernel else "matmul"
    traffic = "bytes the kernel needs" if kernel else "DMA bytes"
    if flops:
        point = charts.RooflinePoint(
            flops / moved, flops / time_us / 1e3, f"{flops / time_us / 1e3:.4g} GFLOP/s"
        )
        what = (
            f"{whose} {flops:.3g} flops over {moved:.3g} {traffic} in the port's {time_us:.3g} "
            f"µs: {point.gflops:.3g} GFLOP/s of {peak:.3g}"
        )
    else:
        lo = 1e-3
        point = charts.RooflinePoint(lo, lo * achieved_gbs, f"{achieved_gbs:.3g} GB/s moved")
        what = (
            f"no contraction flops: the port is bound by the {moved:.3g} {traffic}, moved at "
            f"{achieved_gbs:.3g} GB/s of {bw:.3g} in effect (shown at the left edge)"
        )
    chart = charts.roofline(bw, peak, point)
    return chart, f"trn2 roofline at {t.get('shape', 'the largest shape')}: {what}."


def to_html(
    report: dict[str, Any],
    cuda_path: str | Path,
    port_path: str | Path,
    generated: dict[str, Any] | None = None,
) -> str:
    from markupsafe import Markup

    from cuda2nki.report import highlight, pages

    cuda_src = Path(cuda_path).read_text(errors="replace")
    port_src = Path(port_path).read_text(errors="replace")
    hits = {
        f["line"]: f"{f['id']}: {f['message']}"
        for f in report["findings"]
        if _same_file(f["file"], port_path)
    }
    links = {
        i: int(m.group(1))
        for i, ln in enumerate(port_src.splitlines(), 1)
        if (m := _FROM.search(ln))
    } or tensor_links(
        cuda_src,
        port_src,
        report.get("binding") or {},
        report.get("kernel", ""),
        report.get("port_kernel", ""),
    )
    heat, engines, roof = heatmap(report), engine_chart(report), roofline_chart(report)
    v = report["verdict"]
    return pages.render(
        "review.html.j2",
        css=Markup(_CSS + highlight.css()),
        port_kernel=report["port_kernel"],
        kernel=report["kernel"],
        verdict=v,
        verdict_text=v.upper(),
        sections=[
            (title, [Markup(_md_inline(c)) for c in claims])
            for title, claims in sections(report, generated)
        ],
        recommendations=recommendations(report, generated),
        shapes=shape_rows(report),
        findings=report["findings"],
        heatmap=heat and heat[0],
        heatmap_caption=heat and heat[1],
        engines=engines and engines[0],
        engines_caption=engines and engines[1],
        roofline=roof and roof[0],
        roofline_caption=roof and roof[1],
        panes=[
            pane(cuda_path, cuda_src, "cuda", "cuda", {}),
            pane(port_path, port_src, "python", "port", hits, links),
        ],
        data={"verdict": v, "findings": len(report["findings"])},
    )


def _code_lines(src: str, start: re.Pattern[str] | None, comment: str) -> list[tuple[int, str]]:
    """(number, code) for the lines after the first line matching ``start`` (the kernel's
    definition), comments stripped."""
    out, seen = [], start is None
    for i, line in enumerate(src.splitlines(), 1):
        if not seen:
            seen = bool(start.search(line)) if start else True
            continue
        code = line.split(comment, 1)[0]
        if code.strip():
            out.append((i, code))
    return out


def _uses(lines: list[tuple[int, str]], name: str) -> list[int]:
    pat = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    return [i for i, code in lines if pat.search(code)]


def tensor_links(
    cuda_src: str, port_src: str, binding: dict[str, str], kernel: str = "", port_kernel: str = ""
) -> dict[int, int]:
    """Port line -> CUDA line for a hand-written port (no ``# from`` comments): each line of the
    port's kernel that uses a bound tensor links to the first line of the CUDA kernel's body that
    uses the same tensor (an input the port loads, an output it stores)."""
    cuda = _code_lines(
        cuda_src,
        re.compile(rf"\b{re.escape(kernel)}\s*\(.*\)\s*\{{?\s*$|^\s*\{{\s*$") if kernel else None,
        "//",
    )
    port = _code_lines(
        port_src, re.compile(rf"^\s*def\s+{re.escape(port_kernel)}\b") if port_kernel else None, "#"
    )
    links: dict[int, int] = {}
    # pointers only (scalars are used everywhere); outputs (bound last) before inputs, so a line
    # storing an output computed from an input links to the CUDA store
    for c, p in reversed(list(binding.items())):
        if not re.search(rf"\*\s*(?:__restrict__\s+)?{re.escape(c)}\b", cuda_src):
            continue
        target = _uses(cuda, c)
        if not target:
            continue
        for i in _uses(port, p):
            links.setdefault(i, target[0])
    return links


def _same_file(a: str | Path, b: str | Path) -> bool:
    """Findings name the port as given on the command line or (from the simulator) absolutely."""
    try:
        return Path(a).resolve() == Path(b).resolve()
    except (OSError, ValueError):
        return str(a) == str(b)


def _md_inline(text: str) -> str:
    s = html.escape(text)
    s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", s)
