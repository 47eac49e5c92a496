"""``cuda2nki review``: every rubric section backed by figures; the HTML loads in a real browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cuda2nki.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "corpus/linalg/matmul_tiled.cu"
GOOD = ROOT / "corpus/linalg/ports/matmul_tiled_port.py"
BAD = ROOT / "corpus/linalg/ports/matmul_tiled_flaw_vector_engine.py"


def test_markdown_review_has_every_section_with_figures(tmp_path: Path) -> None:
    out = tmp_path / "review.md"
    rc = main(["review", str(CUDA), str(BAD), "--seeds", "1", "-o", str(out), "--no-compare"])
    text = out.read_text()
    assert rc == 1
    for title in (
        "Migration fidelity",
        "Tiling and partitioning",
        "Memory hierarchy",
        "DMA and data movement",
        "Numerics and precision",
        "Performance",
        "Recommendations",
    ):
        assert f"## {title}" in text
    assert "C2N5002" in text
    assert "µs" in text and "partitions" in text and "DMA transfers" in text


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="Debian's chromium is not installed")
def test_html_review_renders_in_headless_chromium(tmp_path: Path) -> None:
    out = tmp_path / "review.html"
    assert main(["review", str(CUDA), str(GOOD), "--seeds", "1", "-o", str(out)]) == 0
    profile = tmp_path / "profile"
    proc = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            out.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert 'id="verdict"' in dom and "Verdict: PASS" in dom
    assert 'id="cuda-1"' in dom and 'id="port-1"' in dom
    assert "Uncaught" not in proc.stderr  # no JavaScript errors while loading


def test_review_names_layout_and_output_findings() -> None:
    from cuda2nki.report.review import sections

    report = {
        "verdict": "fail",
        "tolerance_source": "ir",
        "numerics": [],
        "trace": {},
        "findings": [
            {"id": code, "severity": "warning", "message": "m", "line": 1, "file": "p.py"}
            for code in ("C2N5009", "C2N5011", "C2N4021")
        ],
    }
    text = {title: " ".join(claims) for title, claims in sections(report, None)}
    assert "C2N5011" in text["Tiling and partitioning"]
    assert "C2N5009" in text["Performance"]
    assert "C2N4021" in text["Numerics and precision"]


def test_html_review_of_a_divergent_port_has_a_heatmap_and_marked_lines(tmp_path: Path) -> None:
    cuda = ROOT / "corpus/norm/softmax_naive.cu"
    port = ROOT / "corpus/norm/ports/softmax_naive_flaw_missing_tail.py"
    out = tmp_path / "review.html"
    argv = ["review", str(cuda), str(port), "--seeds", "1", "--no-compare", "-o", str(out)]
    assert main(argv) == 1
    page = out.read_text()
    assert "Verdict: FAIL" in page
    assert '<figure class="chart" id="heatmap">' in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # self-contained
    assert "@import" not in page and "url(http" not in page
    assert '<g class="axis x">' in page and '<g class="legend">' in page
    assert re.search(r"partition tile \d+, free tile \d+: [1-9]\d* mismatches", page)
    assert 'class="ln hit" id="port-17"' in page  # the tile loop without a remainder (C2N5003)
    # a hand-written port has no '# from' comments: its lines link to the CUDA lines that use the
    # same tensors (the output store DMA to the CUDA line deriving the output row pointer)
    store = next(
        i for i, line in enumerate(port.read_text().splitlines(), 1) if "dst=output[" in line
    )
    assert f'<span class="ln" id="port-{store}">' in page or f'id="port-{store}"' in page
    cuda_line = 1 + cuda.read_text().splitlines().index("        float* y = output + r * C;")
    assert f'href="#cuda-{cuda_line}"' in page


def _report(findings: list[dict], trace: dict) -> dict:
    return {"verdict": "fail", "findings": findings, "numerics": [], "trace": trace}


def test_recommendation_follows_the_diagnosed_mechanism() -> None:
    from cuda2nki.report.review import recommendations

    f = {
        "id": "C2N4008",
        "severity": "error",
        "line": 31,
        "message": "output 'C' is wrong in some tiles",
        "notes": ["root cause: stale accumulator at port line 31", "advice: zero it per tile"],
    }
    recs = recommendations(_report([f], {}))
    assert recs == [
        "[error] line 31: output 'C' is wrong in some tiles [C2N4008] -- zero it per tile"
    ]
    plain = recommendations(_report([{**f, "notes": []}], {}))
    assert "zero it per tile" not in plain[0] and " -- " in plain[0]  # the rule's general fix


def test_bad_figures_are_recommendations_even_without_findings() -> None:
    from cuda2nki.report.review import recommendations

    trace = {"work_partition_use": 0.01, "profile": {"overlapped_ns": 50_000.0}}
    recs = recommendations(_report([], trace), {"time_us": 10.0})
    assert len(recs) == 2
    assert "1% of the 128 partitions" in recs[0]
    assert "5x cuda2nki's own port's" in recs[1]
    # good figures: nothing to recommend
    trace = {"work_partition_use": 0.9, "profile": {"overlapped_ns": 12_000.0}}
    assert recommendations(_report([], trace), {"time_us": 10.0}) == []
    # a layout finding already says it: no second recommendation for the same figure
    layout = {"id": "C2N5008", "severity": "warning", "line": 3, "message": "m", "notes": []}
    recs = recommendations(_report([layout], {"work_partition_use": 0.01}))
    assert len(recs) == 1 and recs[0].startswith("[warning]")
