"""Charts for the HTML reports, as geometry: what to draw and where, in SVG user units.

The report templates only copy these shapes into ``<svg>`` elements (see ``charts.html.j2``);
every position, tick and colour is decided here.  A chart is a :class:`Chart` of named groups
(``plot``, ``axis x``, ``axis y``, ``legend``...), each a list of rectangles, lines, polylines,
circles and texts; its ``viewBox`` scales with the page, so no chart forces a width on it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    title: str = ""


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = "#444"
    dash: str = ""


@dataclass(frozen=True)
class Polyline:
    points: str  # "x,y x,y ..."
    stroke: str
    title: str = ""


@dataclass(frozen=True)
class Circle:
    cx: float
    cy: float
    r: float
    fill: str
    title: str = ""


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    anchor: str = "middle"  # start, middle, end
    rotate: float = 0.0  # degrees, about (x, y)
    size: float = 12.0


@dataclass(frozen=True)
class Stop:
    offset: str
    color: str


@dataclass(frozen=True)
class Gradient:
    id: str
    stops: tuple[Stop, ...]


@dataclass(frozen=True)
class Group:
    cls: str
    rects: tuple[Rect, ...] = ()
    lines: tuple[Line, ...] = ()
    polylines: tuple[Polyline, ...] = ()
    circles: tuple[Circle, ...] = ()
    texts: tuple[Text, ...] = ()


@dataclass(frozen=True)
class Chart:
    id: str
    title: str  # the accessible name (<title>) and the caption
    width: float
    height: float
    groups: tuple[Group, ...]
    gradients: tuple[Gradient, ...] = field(default=())


def _f(x: float) -> float:
    return round(x, 2)


# --------------------------------------------------------------------------- ticks


def nice_ticks(hi: float, count: int = 5) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 × 10^k) up to at least ``hi``."""
    if hi <= 0 or not math.isfinite(hi):
        return [0.0, 1.0]
    raw = hi / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    n = math.ceil(hi / step - 1e-9)
    return [i * step for i in range(n + 1)]


def tick_label(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e4 or abs(v) < 1e-2:
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
    return f"{v:g}"


# --------------------------------------------------------------------------- heatmap

_HEAT_LOW = (255, 255, 255)
_HEAT_HIGH = (178, 24, 43)


def heat_colour(v: float, peak: float) -> str:
    """White for 0, then from a pale to a deep red as ``v`` approaches ``peak``."""
    if v <= 0 or peak <= 0:
        return "#f4f4f4"
    t = 0.15 + 0.85 * min(v / peak, 1.0)
    r, g, b = (round(lo + (hi - lo) * t) for lo, hi in zip(_HEAT_LOW, _HEAT_HIGH))
    return f"#{r:02x}{g:02x}{b:02x}"


def _index_ticks(n: int, at_most: int = 8) -> list[int]:
    step = max(1, math.ceil(n / at_most))
    return list(range(0, n, step))


def heatmap(grid: Sequence[Sequence[int]], chart_id: str = "heatmap", title: str = "") -> Chart:
    """Mismatches per (partition tile, free tile): rows are partition tiles (y axis), columns
    free tiles (x axis); a colour legend from 0 to the largest count."""
    rows = len(grid)
    cols = max((len(r) for r in grid), default=0)
    peak = max((max(r) for r in grid if r), default=0)
    left, top, legend_w = 56.0, 12.0, 90.0
    cell = max(4.0, min(160.0, 520.0 / max(cols, 1), 360.0 / max(rows, 1)))
    pw, ph = cell * cols, cell * rows
    width = left + max(pw, 160.0) + legend_w + 20
    height = top + ph + 48
    cells = tuple(
        Rect(
            _f(left + f * cell),
            _f(top + p * cell),
            _f(cell),
            _f(cell),
            heat_colour(v, peak),
            f"partition tile {p}, free tile {f}: {v} mismatches",
        )
        for p, r in enumerate(grid)
        for f, v in enumerate(r)
    )
    x_axis = Group(
        "axis x",
        lines=(Line(left, top + ph, left + pw, top + ph),),
        texts=tuple(
            Text(_f(left + (i + 0.5) * cell), _f(top + ph + 14), str(i)) for i in _index_ticks(cols)
        )
        + (Text(_f(left + pw / 2), _f(top + ph + 34), "free tile (512 columns each)"),),
    )
    y_axis = Group(
        "axis y",
        lines=(Line(left, top, left, top + ph),),
        texts=tuple(
            Text(left - 6, _f(top + (i + 0.5) * cell + 4), str(i), anchor="end")
            for i in _index_ticks(rows)
        )
        + (Text(14, _f(top + ph / 2), "partition tile (128 rows)", rotate=-90),),
    )
    lx = left + max(pw, 160.0) + 24
    bar_h = max(ph, 60.0)
    legend = Group(
        "legend",
        rects=(Rect(lx, top, 14, _f(bar_h), "url(#heat-scale)", "mismatches per tile"),),
        texts=(
            Text(lx + 20, top + 10, str(peak), anchor="start"),
            Text(lx + 20, _f(top + bar_h), "0", anchor="start"),
            Text(lx, _f(top + bar_h + 16), "mismatches", anchor="start"),
        ),
    )
    grad = Gradient(
        "heat-scale",
        (Stop("0%", heat_colour(peak, peak)), Stop("100%", heat_colour(peak * 1e-9, peak))),
    )
    return Chart(
        chart_id,
        title or "Mismatches per tile",
        _f(width),
        _f(max(height, top + bar_h + 30)),
        (Group("plot", rects=cells), x_axis, y_axis, legend),
        (grad,),
    )


# --------------------------------------------------------------------------- engine time

ENGINE_COLOURS = {
    "dma": "#4477aa",
    "tensor": "#228833",
    "vector": "#ccbb44",
    "scalar": "#ee6677",
    "gpsimd": "#aa3377",
    "sync": "#bbbbbb",
}


def engine_bars(time_ns: Mapping[str, float], chart_id: str = "engine-time") -> Chart | None:
    """Horizontal bars: the cost model's busy time of each engine, in µs, longest first."""
    items = sorted(((k, float(v) / 1000.0) for k, v in time_ns.items()), key=lambda kv: -kv[1])
    if not items:
        return None
    left, top, pw, bar, gap = 70.0, 10.0, 460.0, 20.0, 8.0
    ticks = nice_ticks(max(v for _, v in items))
    hi = ticks[-1] or 1.0
    ph = len(items) * (bar + gap)
    bars, labels = [], []
    for i, (eng, us) in enumerate(items):
        y = top + i * (bar + gap) + gap / 2
        w = pw * us / hi
        colour = ENGINE_COLOURS.get(eng, "#888888")
        bars.append(Rect(left, _f(y), _f(max(w, 1.0)), bar, colour, f"{eng}: {us:.4g} µs"))
        labels.append(Text(left - 6, _f(y + bar * 0.7), eng, anchor="end"))
        labels.append(Text(_f(left + w + 4), _f(y + bar * 0.7), f"{us:.3g} µs", anchor="start"))
    x_axis = Group(
        "axis x",
        lines=(Line(left, top + ph, left + pw, top + ph),)
        + tuple(
            Line(_f(left + pw * t / hi), top + ph, _f(left + pw * t / hi), top + ph + 4)
            for t in ticks
        ),
        texts=tuple(Text(_f(left + pw * t / hi), top + ph + 16, tick_label(t)) for t in ticks)
        + (Text(left + pw / 2, top + ph + 34, "busy time (µs, cost model)"),),
    )
    y_axis = Group("axis y", lines=(Line(left, top, left, top + ph),), texts=tuple(labels[::2]))
    return Chart(
        chart_id,
        "Time per engine",
        left + pw + 70,
        _f(top + ph + 44),
        (Group("plot", rects=tuple(bars), texts=tuple(labels[1::2])), x_axis, y_axis),
    )


# --------------------------------------------------------------------------- roofline


@dataclass(frozen=True)
class RooflinePoint:
    intensity: float  # flops per byte moved by DMA
    gflops: float  # achieved, by the cost model's time
    label: str


def _decades(lo: float, hi: float) -> list[int]:
    return list(range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1))


def roofline(
    bandwidth_gbs: float,
    peak_gflops: float,
    point: RooflinePoint,
    chart_id: str = "roofline",
) -> Chart:
    """Log-log roofline: attainable GFLOP/s against arithmetic intensity (flop/byte), the memory
    roof (DMA bandwidth) rising to the compute roof (tensor-engine peak) at the ridge point, and
    the port where its cost-model time puts it."""
    ridge = peak_gflops / bandwidth_gbs
    xs = _decades(min(point.intensity, ridge / 100), max(point.intensity * 10, ridge * 100))
    ys = _decades(
        min(point.gflops, bandwidth_gbs * 10.0 ** xs[0]), max(peak_gflops * 2, point.gflops)
    )
    left, top, pw, ph = 64.0, 14.0, 460.0, 260.0

    def px(v: float) -> float:
        return _f(left + pw * (math.log10(v) - xs[0]) / (xs[-1] - xs[0]))

    def py(v: float) -> float:
        return _f(top + ph - ph * (math.log10(v) - ys[0]) / (ys[-1] - ys[0]))

    x_lo, x_hi = 10.0 ** xs[0], 10.0 ** xs[-1]
    roof = Polyline(
        f"{px(x_lo)},{py(max(bandwidth_gbs * x_lo, 10.0 ** ys[0]))} "
        f"{px(ridge)},{py(peak_gflops)} {px(x_hi)},{py(peak_gflops)}",
        "#222222",
        f"roof: {bandwidth_gbs:g} GB/s DMA, {peak_gflops:g} GFLOP/s tensor engine",
    )
    grid = tuple(Line(px(10.0**d), top, px(10.0**d), top + ph, "#e3e3e3") for d in xs) + tuple(
        Line(left, py(10.0**d), left + pw, py(10.0**d), "#e3e3e3") for d in ys
    )
    x_axis = Group(
        "axis x",
        lines=(Line(left, top + ph, left + pw, top + ph),),
        texts=tuple(Text(px(10.0**d), top + ph + 16, tick_label(10.0**d)) for d in xs)
        + (Text(left + pw / 2, top + ph + 36, "arithmetic intensity (flop per DMA byte)"),),
    )
    y_axis = Group(
        "axis y",
        lines=(Line(left, top, left, top + ph),),
        texts=tuple(
            Text(left - 6, _f(py(10.0**d) + 4), tick_label(10.0**d), anchor="end") for d in ys
        )
        + (Text(14, top + ph / 2, "GFLOP/s", rotate=-90),),
    )
    mark = Circle(px(point.intensity), py(point.gflops), 5, "#cc3311", point.label)
    legend = Group(
        "legend",
        lines=(Line(left + 10, top + 10, left + 34, top + 10, "#222222"),),
        circles=(Circle(left + 22, top + 28, 5, "#cc3311"),),
        texts=(
            Text(left + 40, top + 14, "roof (DMA bandwidth, tensor-engine peak)", anchor="start"),
            Text(left + 40, top + 32, "this port (cost model)", anchor="start"),
        ),
    )
    return Chart(
        chart_id,
        "Roofline",
        left + pw + 20,
        top + ph + 46,
        (
            Group("grid", lines=grid),
            Group("plot", polylines=(roof,), circles=(mark,)),
            x_axis,
            y_axis,
            legend,
        ),
    )


# --------------------------------------------------------------------------- counts


def count_bars(
    counts: Sequence[tuple[str, int, str]], chart_id: str, title: str, unit: str
) -> Chart:
    """Vertical bars, one per (label, count, colour), with a count axis."""
    left, top, ph, bar, gap = 48.0, 12.0, 180.0, 56.0, 22.0
    ticks = nice_ticks(max((c for _, c, _ in counts), default=0), 4)
    hi = ticks[-1] or 1.0
    pw = len(counts) * (bar + gap) + gap
    rects, texts = [], []
    for i, (label, n, colour) in enumerate(counts):
        x = left + gap + i * (bar + gap)
        h = ph * n / hi
        rects.append(Rect(_f(x), _f(top + ph - h), bar, _f(h), colour, f"{label}: {n} {unit}"))
        texts.append(Text(_f(x + bar / 2), _f(top + ph - h - 4), str(n)))
    x_axis = Group(
        "axis x",
        lines=(Line(left, top + ph, left + pw, top + ph),),
        texts=tuple(
            Text(_f(left + gap + i * (bar + gap) + bar / 2), top + ph + 16, label)
            for i, (label, _, _) in enumerate(counts)
        ),
    )
    y_axis = Group(
        "axis y",
        lines=(Line(left, top, left, top + ph),)
        + tuple(
            Line(left - 4, _f(top + ph - ph * t / hi), left, _f(top + ph - ph * t / hi))
            for t in ticks
        ),
        texts=tuple(
            Text(left - 7, _f(top + ph - ph * t / hi + 4), tick_label(t), anchor="end")
            for t in ticks
        )
        + (Text(12, top + ph / 2, unit, rotate=-90),),
    )
    return Chart(
        chart_id,
        title,
        _f(left + pw + 10),
        top + ph + 30,
        (Group("plot", rects=tuple(rects), texts=tuple(texts)), x_axis, y_axis),
    )
