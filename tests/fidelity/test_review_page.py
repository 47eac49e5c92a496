"""The pieces of the HTML review: highlighting, seeds merged per shape, chart geometry."""

from __future__ import annotations

import math

import pytest

from cuda2nki.report import charts, highlight
from cuda2nki.report.review import sections, shape_rows

CUDA = """// one thread per element
__global__ void scale(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];  /* a comment
    over two lines */
}
"""

PY = '''"""A docstring
on two lines."""
import nki

def k(x, n=3):
    return x  # done
'''


@pytest.mark.parametrize(("text", "language"), [(CUDA, "cuda"), (PY, "python")])
def test_highlighted_lines_give_the_source_back(text: str, language: str) -> None:
    lines = highlight.lines(text, language)
    assert ["".join(s.text for s in ln) for ln in lines] == text.splitlines()


def _classes(lines, row: int, word: str) -> set[str]:
    return {s.cls for s in lines[row] if word in s.text}


def test_cuda_keywords_types_numbers_and_comments_are_classed() -> None:
    lines = highlight.lines(CUDA, "cuda")
    assert _classes(lines, 0, "one thread") == {"c"}  # Pygments' classes, folded to the page's
    assert _classes(lines, 1, "__global__") & {"k", "kt"}
    assert _classes(lines, 1, "float") & {"k", "kt"}
    assert _classes(lines, 3, "2.0f") == {"m"}
    assert _classes(lines, 4, "over two lines") == {"c"}  # a block comment's second line


def test_python_strings_spanning_lines_are_classed_on_each_line() -> None:
    lines = highlight.lines(PY, "python")
    assert {s.cls for s in lines[1]} == {"s"}  # the docstring's second line
    assert _classes(lines, 4, "def") == {"k"}
    assert _classes(lines, 5, "# done") == {"c"}
    assert ".hl .k{" in highlight.css()


def _run(shape: str, seed: int, cls: str = "expected", err: float = 0.0) -> dict:
    return {
        "output": "y",
        "shape": shape,
        "seed": seed,
        "distribution": ["normal", "special", "uniform"][seed % 3],
        "classification": cls,
        "max_abs_error": err,
        "tolerance_max": 1e-6,
        "normwise_error": err,
        "mismatch_pct": 100.0 * (err > 1e-6),
        "evidence": f"seed {seed} evidence",
    }


def test_one_row_per_shape_with_seeds_merged_and_the_worst_seed_shown() -> None:
    numerics = [_run("N=64", s) for s in range(3)]
    numerics += [_run("N=200", 0), _run("N=200", 1, "defect", 5.0), _run("N=200", 2, "defect", 9.0)]
    rows = shape_rows({"numerics": numerics})
    assert [(r.shape, r.seeds) for r in rows] == [("N=64", "0, 1, 2"), ("N=200", "0, 1, 2")]
    assert rows[0].result == "within tolerance" and rows[0].cls == ""
    assert rows[1].result == "defect: 2 of 3 seeds" and rows[1].evidence == "seed 2 evidence"
    assert rows[1].max_abs == "9" and rows[1].distributions == "normal, special, uniform"


def test_fidelity_claims_name_each_shape_once() -> None:
    numerics = [_run("N=200", s, "defect", 1.0 + s) for s in range(4)]
    report = {"verdict": "fail", "numerics": numerics, "findings": [], "tolerance_source": "ir"}
    claims = dict(sections(report))["Migration fidelity"]
    assert len(claims) == 2 and "seeds 0, 1, 2, 3" in claims[1]
    assert "seed 3 evidence" in claims[1]  # the worst of the four


def test_nice_ticks_cover_the_maximum_with_round_steps() -> None:
    assert charts.nice_ticks(1.38) == [0.0, 0.5, 1.0, 1.5]
    assert charts.nice_ticks(8385, 4) == [0, 2500, 5000, 7500, 10000]
    assert charts.nice_ticks(0) == [0.0, 1.0]


def _group(chart: charts.Chart, cls: str) -> charts.Group:
    return next(g for g in chart.groups if g.cls == cls)


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (3, 7), (40, 90)])
def test_heatmap_has_a_cell_per_tile_axes_and_a_legend(rows: int, cols: int) -> None:
    grid = [[(p * cols + f) % 5 for f in range(cols)] for p in range(rows)]
    chart = charts.heatmap(grid)
    cells = _group(chart, "plot").rects
    assert len(cells) == rows * cols
    assert cells[cols + 1 if rows > 1 and cols > 1 else 0].title.startswith("partition tile")
    x, y = _group(chart, "axis x"), _group(chart, "axis y")
    assert any("free tile" in t.text for t in x.texts) and any(
        "partition" in t.text for t in y.texts
    )
    assert len(x.texts) <= 9 and len(y.texts) <= 9  # ticks thinned on large grids
    legend = _group(chart, "legend")
    assert legend.rects[0].fill == "url(#heat-scale)" and chart.gradients[0].id == "heat-scale"
    assert str(max(max(r) for r in grid)) in {t.text for t in legend.texts}
    assert (
        max(c.x + c.w for c in cells) <= chart.width
        and max(c.y + c.h for c in cells) <= chart.height
    )


def test_heat_colours_darken_with_the_count() -> None:
    def lum(c: str) -> int:
        return sum(int(c[i : i + 2], 16) for i in (1, 3, 5))

    assert charts.heat_colour(0, 10) == "#f4f4f4"
    assert (
        lum(charts.heat_colour(1, 10))
        > lum(charts.heat_colour(5, 10))
        > lum(charts.heat_colour(10, 10))
    )


def test_engine_bars_longest_first_scaled_to_the_axis() -> None:
    chart = charts.engine_bars({"vector": 200.0, "dma": 1378.1, "scalar": 106.7})
    assert chart is not None
    bars = _group(chart, "plot").rects
    assert [b.title.split(":")[0] for b in bars] == ["dma", "vector", "scalar"]
    assert bars[0].w > bars[1].w > bars[2].w
    ticks = [t.text for t in _group(chart, "axis x").texts]
    assert ticks[:4] == ["0", "0.5", "1", "1.5"] and "µs" in ticks[-1]
    assert charts.engine_bars({}) is None


def test_roofline_puts_the_ridge_and_the_port_where_they_belong() -> None:
    bw, peak = 368.0, 20000.0
    point = charts.RooflinePoint(10.0, 1000.0, "port")
    chart = charts.roofline(bw, peak, point)
    roof = _group(chart, "plot").polylines[0]
    (x0, y0), (xr, yr), (x1, y1) = (tuple(map(float, p.split(","))) for p in roof.points.split())
    assert yr == y1 and x0 < xr < x1 and y0 > yr  # rising memory roof, flat compute roof
    mark = _group(chart, "plot").circles[0]
    # the port's intensity (10) is left of the ridge (54): its x lies between the first and ridge
    assert x0 < mark.cx < xr
    # log scale: one decade of intensity is the same distance everywhere on the x axis
    ticks = _group(chart, "axis x").texts[:-1]
    xs = [t.x for t in ticks]
    assert len({round(b - a, 1) for a, b in zip(xs, xs[1:])}) == 1
    decades = math.log10((peak / bw) / float(ticks[0].text))  # from the axis' left end to the ridge
    assert math.isclose(xr - x0, (xs[1] - xs[0]) * decades, rel_tol=0.02)
    assert {"legend", "axis x", "axis y"} <= {g.cls for g in chart.groups}
