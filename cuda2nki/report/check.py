"""Renderings of a check report: clang-style text, JSON, SARIF 2.1.0 and Markdown.

The report is passed as the plain dictionary of ``CheckReport.to_dict()`` so this package does not
depend on :mod:`cuda2nki.fidelity`.  SARIF rules (``shortDescription``, ``help``) come from the one
diagnostic registry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cuda2nki import __version__
from cuda2nki.diagnostics import rules

_LEVEL = {"error": "error", "warning": "warning", "note": "note"}
#: where no copy of the catalogue page is at hand (an installed wheel): a reserved, never-resolving
#: host, so that no tool follows it anywhere
HELP_URI = "https://cuda2nki.invalid/rules/{code}"
#: the catalogue page generated from the registry (docs/rules.md), in a checkout
RULES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _slug(heading: str) -> str:
    """The anchor Markdown renderers give a heading: lower case, punctuation dropped, spaces to -."""
    kept = "".join(ch for ch in heading.lower() if ch.isalnum() or ch in " -_")
    return kept.replace(" ", "-")


def help_uri(code: str, title: str = "") -> str:
    """An absolute URI of the id's entry in the generated catalogue (``file:`` URI of
    docs/rules.md in a checkout), else the placeholder."""
    if RULES_PAGE.is_file():
        anchor = _slug(f"{code}: {title}") if title else ""
        return RULES_PAGE.as_uri() + (f"#{anchor}" if anchor else "")
    return HELP_URI.format(code=code)


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


def to_text(report: dict[str, Any]) -> str:
    out = []
    for f in report["findings"]:
        out.append(
            f"{f['file']}:{f['line']}:{f.get('col', 1)}: {f['severity']}: {f['message']} [{f['id']}]"
        )
        out.extend(f"note: {n}" for n in f.get("notes", []))
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


def to_sarif(report: dict[str, Any]) -> dict[str, Any]:
    table = rules()
    ids = sorted({f["id"] for f in report["findings"]})
    index = {c: i for i, c in enumerate(ids)}
    sarif_rules = []
    for c in ids:
        r = table.get(c)
        entry: dict[str, Any] = {"id": c, "helpUri": help_uri(c, r.title if r else "")}
        if r is not None:
            entry.update(
                {
                    "name": "".join(w.capitalize() for w in r.title.replace("-", " ").split()),
                    "shortDescription": {"text": r.title},
                    "fullDescription": {"text": r.explanation or r.title},
                    "help": {
                        "text": (r.explanation + ("\nFix: " + r.fix if r.fix else "")).strip()
                        or r.title
                    },
                    "defaultConfiguration": {"level": _LEVEL[str(r.severity)]},
                }
            )
        sarif_rules.append(entry)
    results = []
    for f in report["findings"]:
        results.append(
            {
                "ruleId": f["id"],
                "ruleIndex": index[f["id"]],
                "level": _LEVEL.get(f["severity"], "warning"),
                "message": {"text": f["message"]},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": Path(f["file"]).as_posix()},
                            "region": {
                                "startLine": max(1, int(f["line"] or 1)),
                                "startColumn": max(1, int(f.get("col") or 1)),
                            },
                        }
                    }
                ],
            }
        )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cuda2nki",
                        "version": __version__,
                        "informationUri": help_uri(""),
                        "rules": sarif_rules,
                    }
                },
                "results": results,
                "properties": {"verdict": report["verdict"], "kernel": report["kernel"]},
            }
        ],
    }


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
