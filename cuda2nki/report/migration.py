"""Migration reports: CSV (one row per kernel) and a self-contained HTML page: a summary with
charts, the kernels in a scrolling, filterable table with their diagnostics folded, the files.

``report`` is the deterministic census of :func:`cuda2nki.batch.migrate.build_report`; ``times``
(optional) is the run's timing (:func:`cuda2nki.batch.migrate.run_timing`: per file, and per kernel
where the worker measured it).  Times of files taken from the cache are the times measured when
they were computed and are marked as such.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
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
    "binding",
    "instantiations",
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
                r.get("binding") or "",
                " ".join(i["kernel"] for i in r.get("instantiations", [])),
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

#: shows the kernels whose status (or verdict) and text match the filters, and counts them
_FILTER_JS = """
(() => {
  const pick = document.getElementById('filter-status'), text = document.getElementById('filter-text');
  const count = document.getElementById('filter-count');
  const rows = Array.from(document.querySelectorAll('#kernels tbody tr'));
  const apply = () => {
    const [field, value] = pick.value ? pick.value.split(':') : ['', ''];
    const q = text.value.trim().toLowerCase();
    let shown = 0;
    rows.forEach(r => {
      const ok = (!field || r.dataset[field] === value) && (!q || r.textContent.toLowerCase().includes(q));
      r.hidden = !ok; shown += ok ? 1 : 0;
    });
    count.textContent = shown + ' of ' + rows.length + ' kernels shown';
  };
  pick.addEventListener('change', apply); text.addEventListener('input', apply); apply();
})();
"""

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em 1.5em;color:#222;max-width:1600px}
table{border-collapse:collapse;margin:.5em 0} th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#f0f0f0;cursor:pointer} td{overflow-wrap:break-word}
thead th{position:sticky;top:0;z-index:1}
.box{overflow:auto;max-width:100%;max-height:75vh;border:1px solid #ddd}
.box table{margin:0;width:100%}
.automatic{background:#e6f6e6}.literal{background:#fff7d6}.manual{background:#fde8d8}
.refused,.failed{background:#f8d7da} code{font-size:90%}
.top{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}
.top>div{min-width:0;flex:0 1 auto}
figure.chart{margin:0} figure.chart svg{max-width:100%;height:auto;display:block}
.filters{display:flex;flex-wrap:wrap;gap:.8em;align-items:center;margin:.5em 0}
.filters input{min-width:16em;max-width:100%}
details summary{cursor:pointer} details ul{margin:.3em 0;padding-left:1.2em}
td.diags{min-width:24em;max-width:46em} td.path{overflow-wrap:anywhere;min-width:8em} #kernels{font-size:.92em} li.note{color:#555}
.sev-error{color:#a00;font-weight:600}.sev-warning{color:#8a5a00}
"""

STATUS_COLOURS = {
    "automatic": "#5aae61",
    "literal": "#e6c229",
    "manual": "#f1a340",
    "refused": "#d6604d",
    "failed": "#b2182b",
}


def counts_text(counts: dict[str, int]) -> str:
    """``{"fail": 13, "pass": 65}`` as ``fail 13, pass 65``."""
    return ", ".join(f"{k} {v}" for k, v in counts.items())


FILE_COLUMNS = ("kernels", "lines", "automatic", "literal", "manual", "refused", "failed")


def _seconds(v: float | None) -> str:
    return "" if v is None else f"{v:.3f}"


def _share(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}%" if d else ""


@dataclass(frozen=True)
class Cell:
    text: str
    v: str | None = None  # the sort key, where the text is not it


@dataclass(frozen=True)
class Diag:
    id: str
    severity: str
    line: int
    message: str
    notes: tuple[str, ...]


@dataclass(frozen=True)
class KernelRow:
    status: str
    verdict: str
    cells_before: tuple[str, ...]  # file, kernel, status, idiom, lines
    summary: str  # the diagnostics, in one line
    diags: tuple[Diag, ...]
    cells_after: tuple[str, ...]  # verdict, numerics, check findings, cost (checked runs only)
    seconds: str
    port: str


def _summary_rows(s: dict[str, Any], times: dict[str, Any] | None) -> list[tuple[str, str]]:
    keys = (
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
    rows = [(k, str(s[k])) for k in keys]
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
    return rows


def _file_cells(f: dict[str, Any], times: dict[str, Any] | None) -> list[Cell]:
    secs, cached = file_seconds(f["file"], times)
    mark = " (cached)" if cached else ""
    cells = [Cell(str(f[c])) for c in FILE_COLUMNS]
    cells += [
        Cell(_share(f["automatic"], f["kernels"])),
        Cell(_share(f["literal"], f["kernels"])),
        Cell(_seconds(secs) + mark, _seconds(secs)),
    ]
    return cells


def _files_total(report: dict[str, Any], times: dict[str, Any] | None) -> list[str]:
    s = report["summary"]
    secs = None if times is None else times["compute_seconds"]
    return [
        *(str(s[c]) for c in FILE_COLUMNS),
        _share(s["automatic"], s["kernels"]),
        _share(s["literal"], s["kernels"]),
        _seconds(secs),
    ]


_SEVERITY_RANK = {"error": 0, "warning": 1, "note": 2}


def diagnostics_summary(diags: Sequence[dict[str, Any]]) -> str:
    """``2 warnings, 3 notes: C2N2300, C2N2001 …`` (worst first); empty without diagnostics."""
    if not diags:
        return ""
    counts: dict[str, int] = {}
    for d in sorted(diags, key=lambda d: _SEVERITY_RANK.get(d["severity"], 3)):
        counts[d["severity"]] = counts.get(d["severity"], 0) + 1
    what = ", ".join(f"{n} {sev}{'' if n == 1 else 's'}" for sev, n in counts.items())
    ids = list(
        dict.fromkeys(
            d["id"] for d in sorted(diags, key=lambda d: _SEVERITY_RANK.get(d["severity"], 3))
        )
    )
    shown = ", ".join(ids[:3]) + (f" +{len(ids) - 3}" if len(ids) > 3 else "")
    return f"{what}: {shown}"


def _kernel_row(
    r: dict[str, Any], times: dict[str, Any] | None = None, checked: bool = True
) -> KernelRow:
    diags = tuple(
        Diag(
            d["id"],
            d["severity"],
            int(d.get("line") or 0),
            d["message"],
            tuple(str(n) for n in d.get("notes", [])),
        )
        for d in sorted(r["diagnostics"], key=lambda d: _SEVERITY_RANK.get(d["severity"], 3))
    )
    return KernelRow(
        r["status"],
        str(r.get("verdict") or ""),
        (
            r["file"],
            _kernel_cell(r),
            r["status"],
            str(r.get("idiom") or ""),
            str(r.get("lines", "")),
        ),
        diagnostics_summary(r["diagnostics"]),
        diags,
        (
            str(r.get("verdict") or ""),
            str(r.get("numerics") or ""),
            " ".join(r.get("check_ids", [])),
            "" if r.get("cost_us") is None else str(r["cost_us"]),
        )
        if checked
        else (),
        _seconds(kernel_seconds(r, times)),
        r.get("port") or "",
    )


def _kernel_cell(r: dict[str, Any]) -> str:
    """The kernel's name, with its instantiations (a template kernel) and, for a port, where
    its binding came from."""
    out = r["kernel"]
    if r.get("instantiations"):
        out += " (" + ", ".join(i["kernel"] for i in r["instantiations"]) + ")"
    if r.get("binding"):
        out += f" [{r['binding']} binding]"
    return out


def status_chart(s: dict[str, Any]) -> Any:
    from cuda2nki.report import charts

    counts = [(k, int(s.get(k, 0)), STATUS_COLOURS[k]) for k in STATUS_COLOURS]
    return charts.count_bars(counts, "status-chart", "Kernels by outcome", "kernels")


def verdict_chart(s: dict[str, Any]) -> Any | None:
    from cuda2nki.report import charts

    if "verdicts" not in s:
        return None
    colours = {"pass": "#5aae61", "fail": "#d6604d", "unverified": "#e6c229"}
    counts = [(k, int(v), colours.get(k, "#999999")) for k, v in s["verdicts"].items()]
    return charts.count_bars(counts, "verdict-chart", "Check verdicts", "kernels")


def filter_options(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(value, label) of the status filter: every outcome present, then every verdict."""
    s = report["summary"]
    opts = [("", f"all outcomes ({s['kernels']})")]
    opts += [(f"status:{k}", f"{k} ({s[k]})") for k in STATUS_COLOURS if s.get(k)]
    opts += [(f"verdict:{k}", f"verdict {k} ({v})") for k, v in s.get("verdicts", {}).items()]
    return opts


def to_html(report: dict[str, Any], times: dict[str, Any] | None = None) -> str:
    """The report page: summary and charts, kernels (filterable, notes folded), files with
    totals, diagnostics by id."""
    from markupsafe import Markup

    from cuda2nki.diagnostics import rules
    from cuda2nki.report import pages

    s = report["summary"]
    table = rules()
    checked = "verdicts" in s  # the check columns only where checks ran
    return pages.render(
        "migrate.html.j2",
        css=Markup(_CSS),
        tool=report["tool"],
        mode=report["mode"],
        target=report["target"],
        summary=_summary_rows(s, times),
        timed=times is not None,
        status_chart=status_chart(s),
        verdict_chart=verdict_chart(s),
        options=filter_options(report),
        checked=checked,
        kernels=[_kernel_row(r, times, checked) for r in report["kernels"]],
        files=[(f["file"], _file_cells(f, times)) for f in report["files"]],
        total=_files_total(report, times),
        ids=[
            (k, v, table[k].title if k in table else "") for k, v in s["diagnostics_by_id"].items()
        ],
        data=s,
        scripts=Markup(_SORT_JS + _FILTER_JS),
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
