"""Renderings of a check report: clang-style text, JSON, SARIF 2.1.0 and Markdown.

The report is passed as the plain dictionary of ``CheckReport.to_dict()`` so this package does not
depend on :mod:`cuda2nki.fidelity`.  SARIF (:mod:`cuda2nki.report.sarif`) takes its rules from the
one diagnostic registry.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _numerics_lines(report: dict[str, Any]) -> list[str]:
    lines = []
    for n in report["numerics"]:
        if n.get("output") == "*":
            lines.append(
                f"  {n['shape']}: port failed ({n.get('defect')}): {n.get('evidence', '')}"
            )
            continue
        tag = n["classification"] + (f"/{n['defect']}" if n.get("defect") else "")
        lines.append(
            f"  {n['output']} @ {n['shape']} seed {n.get('seed', 0)} ({n.get('distribution', '')}): {tag}; "
            f"max abs {n['max_abs_error']:.3g}, max rel {n['max_rel_error']:.3g}, normwise {n['normwise_error']:.3g}, "
            f"mismatch {n['mismatch_pct']:.3g}% (tolerance up to {n['tolerance_max']:.3g}, {n.get('tolerance_source')})"
        )
    return lines


def to_text(report: dict[str, Any], color: bool = False) -> str:
    """Clang-style findings, then numerics, trace and verdict; ``color`` adds clang's colours."""
    from cuda2nki.diagnostics import paint

    out = []
    for f in report["findings"]:
        sev = f["severity"]
        out.append(
            paint(f"{f['file']}:{f['line']}:{f.get('col', 1)}:", "bold", color)
            + " "
            + paint(f"{sev}:", sev if sev in ("error", "warning", "note") else "bold", color)
            + " "
            + paint(f"{f['message']} [{f['id']}]", "bold", color)
        )
        out.extend(_note_lines(f, color))
    if report["numerics"]:
        worst = _summarise_numerics(report["numerics"])
        out.append(
            f"numerics ({len(report['numerics'])} comparisons, tolerance from {report['tolerance_source']}):"
        )
        out.extend(worst)
    if report.get("trace"):
        t = report["trace"]
        out.append(
            f"trace: {t.get('instructions', 0)} instructions, {t.get('dma_count', 0)} DMAs "
            f"({t.get('avg_dma_bytes_per_partition', 0)} B per partition row), partition use "
            f"{100 * t.get('partition_utilisation', 0):.0f}%"
        )
    printed = report.get("port_output") or ""
    if printed.strip():
        lines = printed.rstrip().splitlines()[-10:]
        out.append("the port printed (last lines, from its sandbox):")
        out.extend(f"  | {line[:200]}" for line in lines)
    out.append(
        f"verdict: {report['verdict'].upper()} -- {report['kernel']} ({Path(report['cuda_file']).name}) vs "
        f"{report['port_kernel']} ({Path(report['port_file']).name}, {report['api']} API)"
        + (" [static only]" if report.get("static_only") else "")
    )
    return "\n".join(out)


def _note_lines(f: dict[str, Any], color: bool = False) -> list[str]:
    """``file:line:col: note: text``: a note's own location, else its finding's."""
    from cuda2nki.diagnostics import paint

    placed = {r["message"]: r for r in f.get("related", [])}
    out = []
    for n in f.get("notes", []):
        at = placed.get(n, f)
        where = paint(f"{at['file']}:{at['line']}:{at.get('col', 1)}:", "bold", color)
        out.append(f"{where} {paint('note:', 'note', color)} {n}")
    return out


def _summarise_numerics(numerics: list[dict[str, Any]]) -> list[str]:
    """Failing comparisons in full; passing ones folded into one line per output."""
    failing = [n for n in numerics if n.get("classification") != "expected"]
    passing = [n for n in numerics if n.get("classification") == "expected"]
    lines = _numerics_lines({"numerics": failing[:12]})
    if len(failing) > 12:
        lines.append(f"  ... {len(failing) - 12} more failing comparisons")
    by_out: dict[str, list[dict[str, Any]]] = {}
    for n in passing:
        by_out.setdefault(n["output"], []).append(n)
    for name, ns in by_out.items():
        worst = max(ns, key=lambda n: n["max_abs_error"] / max(n["tolerance_max"], 1e-300))
        lines.append(
            f"  {name}: {len(ns)} comparisons within tolerance; worst max abs {worst['max_abs_error']:.3g} "
            f"vs tolerance {worst['tolerance_max']:.3g} ({worst['shape']})"
        )
    return lines


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, default=_jsonable)


def _jsonable(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, set | tuple):
        return list(o)
    return str(o)


def to_sarif(report: dict[str, Any], invocation: Any = None) -> dict[str, Any]:
    """The check as a SARIF 2.1.0 log (see :mod:`cuda2nki.report.sarif`); ``invocation``
    defaults to this process's command line, timed by the report."""
    from datetime import timedelta

    from cuda2nki.report import sarif

    if invocation is None:
        end = sarif.now()
        start = end - timedelta(seconds=float(report.get("seconds") or 0.0))
        invocation = sarif.Invocation(("cuda2nki", *sys.argv[1:]), start, end)
    props = {
        "verdict": report["verdict"],
        "kernel": report["kernel"],
        "cudaFile": report["cuda_file"],
        "portFile": report["port_file"],
    }
    return sarif.to_sarif(report["findings"], invocation, props)


def to_markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# cuda2nki check: {report['kernel']} → {report['port_kernel']}",
        "",
        f"**Verdict: {report['verdict'].upper()}** · CUDA `{report['cuda_file']}` · port `{report['port_file']}` "
        f"({report['api']} API) · tolerance from {report['tolerance_source']}",
        "",
        "## Findings",
        "",
    ]
    if not report["findings"]:
        lines.append("No findings.")
    else:
        lines += ["| id | severity | line | message |", "|---|---|---|---|"]
        for f in report["findings"]:
            msg = f["message"].replace("|", "\\|")
            lines.append(f"| {f['id']} | {f['severity']} | {f['line']} | {msg} |")
    if report["numerics"]:
        lines += [
            "",
            "## Numerics",
            "",
            "| output | shape | seed | class | max abs | max rel | normwise | mismatch % | tolerance |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for n in report["numerics"]:
            if n.get("output") == "*":
                lines.append(f"| * | {n['shape']} | | failed ({n.get('defect')}) | | | | | |")
                continue
            cls = n["classification"] + (f" / {n['defect']}" if n.get("defect") else "")
            lines.append(
                f"| {n['output']} | {n['shape']} | {n.get('seed', 0)} | {cls} | {n['max_abs_error']:.3g} | "
                f"{n['max_rel_error']:.3g} | {n['normwise_error']:.3g} | {n['mismatch_pct']:.3g} | "
                f"{n['tolerance_max']:.3g} |"
            )
    return "\n".join(lines) + "\n"
