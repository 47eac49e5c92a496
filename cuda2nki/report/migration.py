"""Migration reports: CSV (one row per kernel) and a self-contained HTML page with a sortable table."""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Sequence
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
    "cost_us",
)


def to_csv(records: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in records:
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
                r.get("cost_us") if r.get("cost_us") is not None else "",
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


def _esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def to_html(report: dict[str, Any]) -> str:
    s = report["summary"]
    summary_rows = "".join(
        f"<tr><th>{_esc(k)}</th><td>{_esc(s[k])}</td></tr>"
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
    )
    file_rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{_esc(f[c])}</td>"
            for c in (
                "file",
                "kernels",
                "lines",
                "automatic",
                "literal",
                "manual",
                "refused",
                "failed",
            )
        )
        + "</tr>"
        for f in report["files"]
    )
    kernel_rows = "".join(_kernel_row(r) for r in report["kernels"])
    ids = "".join(
        f"<tr><td><code>{_esc(k)}</code></td><td>{v}</td></tr>"
        for k, v in s["diagnostics_by_id"].items()
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cuda2nki migration report</title><style>{_CSS}</style></head>
<body><h1>cuda2nki migration report</h1>
<p>{_esc(report["tool"])} &middot; mode {_esc(report["mode"])} &middot; target {_esc(report["target"])}</p>
<h2>Summary</h2><table id="summary">{summary_rows}</table>
<h2>Kernels</h2>
<table class="sortable" id="kernels"><thead><tr><th>file</th><th>kernel</th><th>status</th><th>idiom</th><th>lines</th>
<th>diagnostics</th><th>verdict</th><th>cost (µs)</th><th>port</th></tr></thead><tbody>{kernel_rows}</tbody></table>
<h2>Files</h2>
<table class="sortable" id="files"><thead><tr><th>file</th><th>kernels</th><th>lines</th><th>automatic</th>
<th>literal</th><th>manual</th><th>refused</th><th>failed</th></tr></thead><tbody>{file_rows}</tbody></table>
<h2>Diagnostics by id</h2><table class="sortable"><thead><tr><th>id</th><th>count</th></tr></thead>
<tbody>{ids}</tbody></table>
<script type="application/json" id="report-data">{_esc(json.dumps(s, sort_keys=True))}</script>
<script>{_SORT_JS}</script></body></html>
"""


def _kernel_row(r: dict[str, Any]) -> str:
    diags = "<br>".join(
        f"<code>{_esc(d['id'])}</code> {_esc(d['message'])}" for d in r["diagnostics"][:5]
    )
    if len(r["diagnostics"]) > 5:
        diags += f"<br>… {len(r['diagnostics']) - 5} more"
    port = f'<a href="{_esc(r["port"])}">{_esc(r["port"])}</a>' if r.get("port") else ""
    return (
        f'<tr class="{_esc(r["status"])}"><td>{_esc(r["file"])}</td><td>{_esc(r["kernel"])}</td>'
        f"<td>{_esc(r['status'])}</td><td>{_esc(r.get('idiom'))}</td><td>{_esc(r.get('lines'))}</td>"
        f"<td>{diags}</td><td>{_esc(r.get('verdict'))}</td><td>{_esc(r.get('cost_us'))}</td><td>{port}</td></tr>"
    )
