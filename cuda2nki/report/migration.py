"""Migration reports: CSV (one row per kernel) and a self-contained HTML page with sortable tables.

``report`` is the deterministic census of :func:`cuda2nki.batch.migrate.build_report`; ``times``
(optional) is the run's timing (:func:`cuda2nki.batch.migrate.run_timing`: per file, and per kernel
where the worker measured it).  Times of files taken from the cache are the times measured when
they were computed and are marked as such.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CSV_COLUMNS = (
    "file",
    "kernel",
    "status",
    "idiom",
    "lines",
    "port",
    "diagnostic_ids",
    "blocking",
    "verdict",
    "numerics",
    "check_ids",
    "cost_us",
    "seconds",
)


def kernel_seconds(r: dict[str, Any], times: dict[str, Any] | None) -> float | None:
    """The time a kernel took (a file-level record: the whole file's time); None if unknown."""
    ft = (times or {}).get("per_file", {}).get(r["file"])
    if ft is None:
        return None
    if not r["kernel"]:
        return ft["seconds"]
    return ft.get("kernels", {}).get(r["kernel"])


def file_seconds(file: str, times: dict[str, Any] | None) -> tuple[float | None, bool]:
    """(seconds, taken from the cache) of one file."""
    ft = (times or {}).get("per_file", {}).get(file)
    return (None, False) if ft is None else (ft["seconds"], bool(ft.get("cached")))


def to_csv(records: Sequence[dict[str, Any]], times: dict[str, Any] | None = None) -> str:
    """One row per kernel; ``seconds`` is the kernel's worker time (blank when not measured)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in records:
        secs = kernel_seconds(r, times)
        w.writerow(
            [
                r["file"],
                r["kernel"],
                r["status"],
                r.get("idiom") or "",
                r.get("lines", 0),
                r.get("port") or "",
                " ".join(sorted({d["id"] for d in r["diagnostics"]})),
                " ".join(r.get("blocking", [])),
                r.get("verdict") or "",
                r.get("numerics") or "",
                " ".join(r.get("check_ids", [])),
                r.get("cost_us") if r.get("cost_us") is not None else "",
                "" if secs is None else f"{secs:.4f}",
            ]
        )
    return buf.getvalue()


_SORT_JS = """
document.querySelectorAll('table.sortable th').forEach((th, col) => th.addEventListener('click', () => {
  const table = th.closest('table'), body = table.tBodies[0];
  const asc = th.dataset.order !== 'asc'; th.dataset.order = asc ? 'asc' : 'desc';
  const rows = Array.from(body.rows);
  const key = r => { const t = r.cells[col].dataset.v ?? r.cells[col].textContent; const n = parseFloat(t);
                     return isNaN(n) ? t : n; };
  rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); });
  rows.forEach(r => body.appendChild(r));
}));
"""

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222} table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left} th{background:#f0f0f0;cursor:pointer}
.automatic{background:#e6f6e6}.literal{background:#fff7d6}.manual{background:#fde8d8}
.refused,.failed{background:#f8d7da} code{font-size:90%}
"""


def counts_text(counts: dict[str, int]) -> str:
    """``{"fail": 13, "pass": 65}`` as ``fail 13, pass 65``."""
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def _esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


FILE_COLUMNS = ("kernels", "lines", "automatic", "literal", "manual", "refused", "failed")


def _seconds(v: float | None) -> str:
    return "" if v is None else f"{v:.3f}"


def _share(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}%" if d else ""


def _summary_rows(s: dict[str, Any], times: dict[str, Any] | None) -> str:
    rows = [
        (k, s[k])
        for k in (
            "files",
            "kernels",
            "lines",
            "automatic",
            "literal",
            "manual",
            "refused",
            "failed",
            "share_recognised",
            "share_literal",
            "share_refused",
        )
    ]
    for key, label in (("verdicts", "check verdicts"), ("numerics", "check numerics")):
        if key in s:
            rows.append((label, counts_text(s[key])))
    if times is not None:
        cached = times.get("cached_compute_seconds", 0.0)
        rows += [
            ("worker time, all files (s)", f"{times['compute_seconds']:.3f}"),
            (
                "of which from the cache (s)",
                f"{cached:.3f} (cached files, computed by an earlier run: {times['files_cached']})",
            ),
            ("wall time of this run (s)", f"{times['wall_seconds']:.3f}"),
        ]
    return "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows)


def _file_row(f: dict[str, Any], times: dict[str, Any] | None) -> str:
    secs, cached = file_seconds(f["file"], times)
    mark = " (cached)" if cached else ""
    cells = [f"<td>{_esc(f['file'])}</td>"]
    cells += [f"<td>{_esc(f[c])}</td>" for c in FILE_COLUMNS]
    cells += [
        f"<td>{_share(f['automatic'], f['kernels'])}</td>",
        f"<td>{_share(f['literal'], f['kernels'])}</td>",
        f'<td data-v="{_seconds(secs)}">{_seconds(secs)}{mark}</td>',
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _files_total(report: dict[str, Any], times: dict[str, Any] | None) -> str:
    s = report["summary"]
    secs = None if times is None else times["compute_seconds"]
    cells = ["<th>total</th>"] + [f"<th>{_esc(s[c])}</th>" for c in FILE_COLUMNS]
    cells += [
        f"<th>{_share(s['automatic'], s['kernels'])}</th>",
        f"<th>{_share(s['literal'], s['kernels'])}</th>",
        f"<th>{_seconds(secs)}</th>",
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def to_html(report: dict[str, Any], times: dict[str, Any] | None = None) -> str:
    """The report page: summary, kernels, files with totals, diagnostics by id."""
    s = report["summary"]
    file_rows = "".join(_file_row(f, times) for f in report["files"])
    kernel_rows = "".join(_kernel_row(r, times) for r in report["kernels"])
    ids = "".join(
        f"<tr><td><code>{_esc(k)}</code></td><td>{v}</td></tr>"
        for k, v in s["diagnostics_by_id"].items()
    )
    note = (
        "<p>Times are the wall-clock seconds a worker spent on each file and kernel (on a busy "
        "machine they include waiting for a CPU); a file taken from the cache shows the time "
        "measured when it was computed.  With several jobs the worker time of all files exceeds "
        "the wall time of the run.</p>"
        if times is not None
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cuda2nki migration report</title><style>{_CSS}</style></head>
<body><h1>cuda2nki migration report</h1>
<p>{_esc(report["tool"])} &middot; mode {_esc(report["mode"])} &middot; target {_esc(report["target"])}</p>
<h2>Summary</h2><table id="summary">{_summary_rows(s, times)}</table>{note}
<h2>Kernels</h2>
<table class="sortable" id="kernels"><thead><tr><th>file</th><th>kernel</th><th>status</th><th>idiom</th><th>lines</th>
<th>diagnostics</th><th>verdict</th><th>numerics</th><th>check findings</th><th>cost (µs)</th><th>time (s)</th><th>port</th></tr></thead><tbody>{kernel_rows}</tbody></table>
<h2>Files</h2>
<table class="sortable" id="files"><thead><tr><th>file</th><th>kernels</th><th>lines</th><th>automatic</th>
<th>literal</th><th>manual</th><th>refused</th><th>failed</th><th>recognised</th><th>literal share</th>
<th>time (s)</th></tr></thead><tbody>{file_rows}</tbody><tfoot>{_files_total(report, times)}</tfoot></table>
<h2>Diagnostics by id</h2><table class="sortable"><thead><tr><th>id</th><th>count</th></tr></thead>
<tbody>{ids}</tbody></table>
<script type="application/json" id="report-data">{_esc(json.dumps(s, sort_keys=True))}</script>
<script>{_SORT_JS}</script></body></html>
"""


def _kernel_row(r: dict[str, Any], times: dict[str, Any] | None = None) -> str:
    diags = "<br>".join(
        f"<code>{_esc(d['id'])}</code> {_esc(d['message'])}" for d in r["diagnostics"][:5]
    )
    if len(r["diagnostics"]) > 5:
        diags += f"<br>… {len(r['diagnostics']) - 5} more"
    port = f'<a href="{_esc(r["port"])}">{_esc(r["port"])}</a>' if r.get("port") else ""
    return (
        f'<tr class="{_esc(r["status"])}"><td>{_esc(r["file"])}</td><td>{_esc(r["kernel"])}</td>'
        f"<td>{_esc(r['status'])}</td><td>{_esc(r.get('idiom'))}</td><td>{_esc(r.get('lines'))}</td>"
        f"<td>{diags}</td><td>{_esc(r.get('verdict'))}</td><td>{_esc(r.get('numerics'))}</td>"
        f"<td>{_esc(' '.join(r.get('check_ids', [])))}</td><td>{_esc(r.get('cost_us'))}</td>"
        f"<td>{_seconds(kernel_seconds(r, times))}</td><td>{port}</td></tr>"
    )


def to_sarif(report: dict[str, Any], in_dir: str | Path, invocation: Any) -> dict[str, Any]:
    """Every diagnostic of a migration as a SARIF 2.1.0 log (one result per distinct
    diagnostic: one in a header shared by several kernels is reported once)."""
    from cuda2nki.report import sarif

    findings: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for k in report.get("kernels", []):
        for d in k.get("diagnostics", []):
            file = str(Path(in_dir) / k["file"])
            key = (d["id"], file, d.get("line"), d.get("col", 1), d["message"])
            if key in seen:
                continue
            seen.add(key)
            findings.append(
                {
                    "id": d["id"],
                    "severity": d["severity"],
                    "message": d["message"],
                    "file": file,
                    "line": d.get("line") or 1,
                    "col": d.get("col") or 1,
                    "notes": [f"kernel {k['kernel']}: {k['status']}", *d.get("notes", [])],
                }
            )
    s = report.get("summary", {})
    props = {k: s[k] for k in ("files", "kernels", "automatic", "literal", "manual") if k in s}
    return sarif.to_sarif(findings, invocation, props)
