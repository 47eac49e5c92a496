"""The HTML review and migration report in headless Chromium: no horizontal overflow at 1400 and
800 px, charts drawn with axes and legends, filters that work, a bounded page height, a
screenshot with something on it.  Skipped where Debian's ``chromium`` is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import browser

pytestmark = pytest.mark.skipif(browser.chromium() is None, reason="chromium is not installed")

ROOT = Path(__file__).resolve().parents[1]
WIDTHS = (1400, 800)
KERNELS = 480  # in the large migration report


@pytest.fixture(scope="module")
def review_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A review of a divergent matmul-free port (heatmap, engine bars, roofline at its edge)."""
    from cuda2nki.cli.main import main

    out = tmp_path_factory.mktemp("review") / "review.html"
    cuda = ROOT / "corpus/norm/softmax_naive.cu"
    port = ROOT / "corpus/norm/ports/softmax_naive_flaw_missing_tail.py"
    argv = ["review", str(cuda), str(port), "--seeds", "2", "--no-compare", "-o", str(out)]
    assert main(argv) == 1
    return out


@pytest.fixture(scope="module")
def matmul_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A passing review of a tensor-engine port (a roofline point with flops)."""
    from cuda2nki.cli.main import main

    out = tmp_path_factory.mktemp("review") / "matmul.html"
    cuda = ROOT / "corpus/linalg/matmul_tiled.cu"
    port = ROOT / "corpus/linalg/ports/matmul_tiled_port.py"
    assert (
        main(["review", str(cuda), str(port), "--seeds", "1", "--no-compare", "-o", str(out)]) == 0
    )
    return out


def _big_migration(n: int) -> dict:
    """A migration report of ``n`` kernels, each with eight diagnostics and long notes."""
    from cuda2nki.batch.migrate import MigrateOptions, build_report

    statuses = ("automatic", "automatic", "automatic", "literal", "manual", "refused")
    long_note = "loop t1 < min(1, N % (128 * min(512, max(1, (N + 127) // 128))) // F) " * 3
    records = []
    for i in range(n):
        status = statuses[i % len(statuses)]
        diags = [
            {
                "id": f"C2N25{j:02d}",
                "severity": "warning" if j == 0 and status != "automatic" else "note",
                "line": 3 + j,
                "col": 1,
                "message": f"diagnostic {j} of kernel_{i} with a fairly long explanation " * 2,
                "notes": [long_note, "where F = min(512, max(1, (N + 127) // 128))"],
            }
            for j in range(8)
        ]
        records.append(
            {
                "file": f"deep/directory/structure/module_{i // 4}/file_with_a_long_name_{i}.cu",
                "kernel": f"kernel_{i}",
                "status": status,
                "idiom": "map" if status == "automatic" else None,
                "port": f"ports/kernel_{i}.py" if status in ("automatic", "literal") else None,
                "lines": 10 + i % 30,
                "diagnostics": diags,
                "blocking": ["C2N2010"] if status in ("manual", "refused") else [],
            }
        )
    return build_report(records, MigrateOptions(Path("in"), Path("out")))


@pytest.fixture(scope="module")
def migrate_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cuda2nki.report import migration

    out = tmp_path_factory.mktemp("migrate") / "report.html"
    out.write_text(migration.to_html(_big_migration(KERNELS)), encoding="utf-8")
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_review_fits_the_window_and_draws_three_charts(
    review_page: Path, tmp_path: Path, width: int
) -> None:
    got = browser.probe(review_page, width, 900, browser.LAYOUT, tmp_path)
    m = got["value"]
    assert got["errors"] == []
    assert m["scrollWidth"] <= m["clientWidth"] <= width, m  # no horizontal overflow
    charts = {c["id"]: c for c in m["charts"]}
    assert set(charts) == {"heatmap", "engine-time", "roofline"}, charts
    for c in charts.values():
        assert c["axisX"] and c["axisY"] and c["marks"] > 0, c
        assert 0 < c["width"] and c["right"] <= m["clientWidth"], c
    assert charts["heatmap"]["legend"] >= 3 and charts["roofline"]["legend"] >= 3


def test_review_code_is_highlighted_and_seeds_are_merged(review_page: Path, tmp_path: Path) -> None:
    script = """({
      keywords: document.querySelectorAll('pre.hl span.k, pre.hl span.kt').length,
      keywordColour: getComputedStyle(document.querySelector('pre.hl span.k')).color,
      plainColour: getComputedStyle(document.querySelector('pre.hl')).color,
      shapes: Array.from(document.querySelectorAll('#numerics tbody tr')).map(r => r.cells[0].textContent),
      seeds: Array.from(document.querySelectorAll('#numerics tbody tr')).map(r => r.cells[2].textContent),
    })"""
    m = browser.probe(review_page, 1400, 900, script, tmp_path)["value"]
    assert m["keywords"] > 10 and m["keywordColour"] != m["plainColour"]
    assert len(m["shapes"]) == len(set(m["shapes"])) > 1  # one row per shape
    # the binding's shapes run every seed, merged into one row; generated points run one input set
    assert "0, 1" in m["seeds"] and set(m["seeds"]) <= {"0, 1", "0"}, m["seeds"]


def test_review_of_a_matmul_port_fits_at_800_px(matmul_review: Path, tmp_path: Path) -> None:
    m = browser.probe(matmul_review, 800, 900, browser.LAYOUT, tmp_path)["value"]
    assert m["scrollWidth"] <= m["clientWidth"], m
    assert {c["id"] for c in m["charts"]} == {"engine-time", "roofline"}  # nothing mismatched


def test_review_screenshot_is_not_blank(review_page: Path, tmp_path: Path) -> None:
    drawn, rows = browser.drawn_rows(browser.screenshot(review_page, 1400, 900, tmp_path))
    assert rows == 900 and drawn > rows // 3, (drawn, rows)


def test_a_blank_page_screenshot_is_blank(tmp_path: Path) -> None:
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><body style='background:#fff'></body></html>")
    drawn, rows = browser.drawn_rows(browser.screenshot(page, 800, 600, tmp_path))
    assert drawn == 0 and rows == 600


@pytest.mark.parametrize("width", WIDTHS)
def test_large_migration_page_fits_and_stays_short(
    migrate_page: Path, tmp_path: Path, width: int
) -> None:
    got = browser.probe(migrate_page, width, 900, browser.LAYOUT, tmp_path)
    m = got["value"]
    assert got["errors"] == []
    assert m["scrollWidth"] <= m["clientWidth"], m
    assert m["scrollHeight"] < 5000, m  # 480 kernels, 3,840 diagnostics (was 600,000 px)
    (chart,) = m["charts"]
    assert chart["id"] == "status-chart" and chart["axisX"] and chart["axisY"]
    assert chart["marks"] == 5  # one bar per outcome


def test_migration_filters_by_status_and_text(migrate_page: Path, tmp_path: Path) -> None:
    script = """(() => {
      const pick = document.getElementById('filter-status'), text = document.getElementById('filter-text');
      const shown = () => Array.from(document.querySelectorAll('#kernels tbody tr')).filter(r => !r.hidden).length;
      const seen = {all: shown(), label: document.getElementById('filter-count').textContent};
      pick.value = 'status:refused'; pick.dispatchEvent(new Event('change'));
      seen.refused = shown();
      text.value = 'KERNEL_13'; text.dispatchEvent(new Event('input'));  // any case
      seen.refusedText = shown(); seen.labelAfter = document.getElementById('filter-count').textContent;
      pick.value = ''; pick.dispatchEvent(new Event('change'));
      seen.text = shown();
      const d = document.querySelector('#kernels tbody tr:not([hidden]) details');
      seen.folded = d.open ? -1 : d.getBoundingClientRect().height;
      d.open = true;
      seen.unfolded = d.getBoundingClientRect().height;
      return seen;
    })()"""
    m = browser.probe(migrate_page, 1400, 900, script, tmp_path)["value"]
    assert m["all"] == KERNELS and m["label"] == f"{KERNELS} of {KERNELS} kernels shown"
    assert m["refused"] == KERNELS // 6  # every sixth kernel
    matching = (13, *range(130, 140))  # kernel_13 and kernel_130..139 (there is no kernel_1300)
    assert m["text"] == len(matching)
    assert m["refusedText"] == sum(1 for i in matching if i % 6 == 5) > 0
    assert m["labelAfter"] == f"{m['refusedText']} of {KERNELS} kernels shown"
    assert 0 < m["folded"] < 40 < 10 * m["folded"] < m["unfolded"]  # one line; twelve and notes


def test_migration_screenshot_is_not_blank(migrate_page: Path, tmp_path: Path) -> None:
    drawn, rows = browser.drawn_rows(browser.screenshot(migrate_page, 800, 900, tmp_path))
    assert drawn > rows // 3, (drawn, rows)
