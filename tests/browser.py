"""Headless Chromium for the HTML page tests: measure a page's layout, take a screenshot.

Debian's ``chromium`` is driven directly (no Python package): a copy of the page gets a probe
script, run after the page's own scripts, that writes what it measured (JSON) into the DOM, and
``--dump-dom`` hands the DOM back.  Screenshots are judged without an image library: in a PNG's
filtered scanlines a run of one colour filters to zero bytes whatever the filter type, so the
rows with a non-zero byte past their first pixel are the rows where something is drawn.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

#: the flags of a quiet, offline, unprivileged headless run
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--hide-scrollbars",
)

_ERRORS = (
    "<script>window.__errors=[];"
    "addEventListener('error',e=>window.__errors.push(String(e.message)));</script>"
)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    exe = chromium()
    assert exe is not None
    return subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


def probe(page: Path, width: int, height: int, script: str, work: Path) -> dict[str, Any]:
    """Load ``page`` in a ``width`` x ``height`` window and return what ``script`` (a JavaScript
    expression evaluated after the page's scripts) yields, plus the page's script errors."""
    html = page.read_text(encoding="utf-8")
    head, sep, tail = html.rpartition("</body>")
    assert sep, "no </body> in the page"
    run = (
        "<script>(() => { const out = {errors: window.__errors, value: (" + script + ")};"
        "const pre = document.createElement('pre'); pre.id = 'probe-result';"
        "pre.style.display = 'none'; pre.textContent = JSON.stringify(out);"
        "document.body.appendChild(pre); })();</script>"
    )
    probed = work / f"probe-{width}-{page.name}"
    probed.write_text(
        head.replace("<head>", "<head>" + _ERRORS, 1) + run + sep + tail, encoding="utf-8"
    )
    proc = _run([f"--window-size={width},{height}", "--dump-dom", probed.as_uri()], work / "prof")
    assert proc.returncode == 0, proc.stderr[-2000:]
    start = proc.stdout.index('<pre id="probe-result"')
    body = proc.stdout[proc.stdout.index(">", start) + 1 : proc.stdout.index("</pre>", start)]
    return json.loads(body.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))


#: the layout figures every page test asks for
LAYOUT = """({
  scrollWidth: document.documentElement.scrollWidth,
  clientWidth: document.documentElement.clientWidth,
  innerWidth: window.innerWidth,
  scrollHeight: document.documentElement.scrollHeight,
  charts: Array.from(document.querySelectorAll('figure.chart')).map(f => {
    const svg = f.querySelector('svg'), box = svg.getBoundingClientRect();
    return {id: f.id, width: box.width, height: box.height, right: box.right,
            axisX: !!svg.querySelector('g.axis.x line') && svg.querySelectorAll('g.axis.x text').length > 1,
            axisY: !!svg.querySelector('g.axis.y line') && svg.querySelectorAll('g.axis.y text').length > 1,
            legend: svg.querySelectorAll('g.legend > *').length,
            marks: svg.querySelectorAll('g.plot rect, g.plot circle, g.plot polyline').length};
  }),
})"""


def screenshot(page: Path, width: int, height: int, work: Path) -> bytes:
    out = work / f"shot-{width}-{page.stem}.png"
    proc = _run(
        [f"--window-size={width},{height}", f"--screenshot={out}", page.as_uri()], work / "prof"
    )
    assert out.is_file(), proc.stderr[-2000:]
    return out.read_bytes()


def drawn_rows(png: bytes) -> tuple[int, int]:
    """(rows where something is drawn, rows) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", data)
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    assert ihdr is not None
    width, height, depth, colour, _, _, interlace = ihdr
    assert depth == 8 and colour in (2, 6) and interlace == 0, ihdr
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = 1 + width * bpp
    rows = [raw[i * stride + 1 + bpp : (i + 1) * stride] for i in range(1, height)]
    return sum(1 for r in rows if r.count(0) != len(r)), height
