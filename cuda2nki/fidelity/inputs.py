"""Inputs that find bugs: several distributions and special values, and shapes with ragged tails.

Seed ``s`` draws from ``DISTRIBUTIONS[s % 5]``: standard normal, special values (±0, ±1, large
magnitudes safe for the dtype, subnormals where the dtype has them, mixed into normal data),
uniform[-1, 1] (not [0, 1), which hides sign bugs), heavy-tailed (Student t with 3 degrees of
freedom), and normal again with another stream.  Special values come second so that even a
two-seed check meets them; for normalisations (softmax, layer/RMS norm) they also hold constant
and low-variance rows.  Integer tensors use their binding ``range``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cuda2nki.binding import Binding, Number, Resolved, generate_inputs, round_to

DISTRIBUTIONS = ("normal", "special", "uniform", "heavy", "normal2")


@dataclass(frozen=True)
class TestPoint:
    values: dict[str, Number]
    generated: bool = False  # added by the checker (tail or edge), not from the binding

    __test__ = False  # not a pytest class


def make_inputs(r: Resolved, seed: int) -> dict[str, np.ndarray]:
    dist = DISTRIBUTIONS[seed % len(DISTRIBUTIONS)]
    base = generate_inputs(
        r, seed=1000 + seed, distribution="uniform" if dist == "uniform" else None
    )
    if dist in ("normal", "uniform", "normal2"):
        return base
    rng = np.random.default_rng(2000 + seed)
    out = {}
    for t in r.binding.tensors:
        a = base[t.name]
        if (
            t.role == "out"
            or a.dtype.kind not in "fV"
            or t.range is not None
            or t.distribution is not None
        ):
            out[t.name] = a
            continue
        shape = r.shapes[t.name]
        if dist == "heavy":
            vals = rng.standard_t(3, size=shape)
        else:
            vals = _special(rng, shape, a.dtype)
            if r.binding.meta.get("idiom") in NORMALISING:
                vals = degenerate_rows(vals)
        out[t.name] = round_to(vals.astype(np.float32), a.dtype)
    return out


#: idioms whose rows are normalised: their special inputs hold constant and low-variance rows
NORMALISING = ("norm", "softmax")


def degenerate_rows(vals: np.ndarray) -> np.ndarray:
    """``vals`` (2-D or more) with every fourth row (along the last axis) constant and every
    fourth, offset by two, scaled down to a variance of 1e-6: the rows where a normalisation's
    eps dominates and a misplaced one shows."""
    if vals.ndim < 2 or vals.shape[-1] < 2:
        return vals
    rows = vals.reshape(-1, vals.shape[-1]).copy()
    rows[1::4] = rows[1::4, :1]
    rows[3::4] *= 1e-3
    return rows.reshape(vals.shape)


def _special(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    vals = rng.standard_normal(size=shape)
    n = vals.size
    if n == 0:
        return vals
    flat = vals.reshape(-1)
    info = np.finfo(np.float32) if dtype.itemsize >= 4 else None
    big = 1e4 if info is None else 1e6  # large but far from overflow after a few products
    tiny = 1e-40 if dtype == np.float32 else 1e-6  # fp32 subnormal / small for narrow types
    specials = np.array([0.0, -0.0, 1.0, -1.0, big, -big, tiny, -tiny])
    k = max(1, n // 8)
    idx = rng.choice(n, size=min(k, n), replace=False)
    flat[idx] = rng.choice(specials, size=idx.size)
    return vals


def _shape_scalars(b: Binding) -> list[str]:
    names = {
        s.name for s in b.scalars if isinstance(s.value, int) and not isinstance(s.value, bool)
    }
    used = set()
    for t in b.tensors:
        for d in t.shape:
            for n in names:
                if (
                    isinstance(d, str)
                    and n in d.replace("(", " ").replace(")", " ").replace(",", " ").split()
                ):
                    used.add(n)
                elif d == n:
                    used.add(n)
    return sorted(used)


def _tokens(dim: object) -> set[str]:
    if not isinstance(dim, str):
        return set()
    return set(dim.replace("(", " ").replace(")", " ").replace(",", " ").split())


def _reduction_dims(b: Binding, dims: list[str]) -> list[str]:
    """Sizes of inputs that size no output: reduction or contraction lengths (K of a matmul)."""
    in_outputs = {n for t in b.tensors if t.role != "in" for d in t.shape for n in _tokens(d)}
    return [d for d in dims if d not in in_outputs]


def _output_dims(b: Binding, dims: list[str]) -> tuple[set[str], set[str]]:
    """Scalars that size an output's partition dimension (the first of a vector or a matrix, the
    second-last of a batch of matrices: the leading axes of (BH, T, T) are batch axes a port
    loops over) and, for rank >= 2, its last (free) dimension."""
    first, last = set(), set()
    for t in b.tensors:
        if t.role == "in" or not t.shape:
            continue
        rows = t.shape[-2] if len(t.shape) >= 2 else t.shape[0]
        if isinstance(rows, str) and rows in dims:
            first.add(rows)
        if len(t.shape) >= 2 and isinstance(t.shape[-1], str) and t.shape[-1] in dims:
            last.add(t.shape[-1])
    return first, last


#: generated multi-tile sizes (partition axis, free axis): two full tiles and a ragged tail, and
#: the fallback of one full tile and a tail
TWO_TILES = (2 * 128 + 2, 2 * 512 + 8)
ONE_TILE = (128 + 2, 512 + 8)

#: a generated multi-tile point is skipped when its estimated work exceeds this (SIMT cost)
MAX_GENERATED_WORK = 5e7


def _work(b: Binding, values: Mapping[str, Number]) -> float:
    """Rough cost of running the kernel: the largest tensor times the longest reduction or
    contraction length (a size of inputs only: K of a matmul; 1 for a map)."""
    try:
        r = b.resolve(values)
    except Exception:  # noqa: BLE001 - an unresolvable point is not run anyway
        return float("inf")
    biggest = max((float(np.prod(s)) for s in r.shapes.values()), default=0.0)
    red = _reduction_dims(b, _shape_scalars(b))
    longest = max((float(v) for k, v in values.items() if k in red), default=1.0)
    return biggest * longest


def test_points(
    b: Binding,
    overrides: Mapping[str, Number] | None = None,
    *,
    extra: bool = True,
    bounds: Sequence[tuple[str, int]] = (),
) -> list[TestPoint]:
    """The binding's points (with ``overrides``), then generated points (see
    :func:`_all_points`), each size the binding's ``[check.multiples]`` constrains rounded up to
    its step (a kernel run only at multiples of 16 is checked at 144 where 129 would be ragged),
    without repeats."""
    return in_steps(b, _all_points(b, overrides, extra=extra, bounds=bounds))


def in_steps(b: Binding, pts: Sequence[TestPoint]) -> list[TestPoint]:
    """``pts`` with every generated value of a stepped size rounded up to its step; a generated
    point equal to an earlier one is dropped."""
    steps = dict(b.multiples)
    out: list[TestPoint] = []
    for p in pts:
        if p.generated and steps:
            vals = {
                k: (-(-int(v) // steps[k]) * steps[k] if k in steps else v)
                for k, v in p.values.items()
            }
            p = TestPoint(vals, generated=True)
            if any(q.values == p.values for q in out):
                continue
        out.append(p)
    return out


def _all_points(
    b: Binding,
    overrides: Mapping[str, Number] | None = None,
    *,
    extra: bool = True,
    bounds: Sequence[tuple[str, int]] = (),
) -> list[TestPoint]:
    """The binding's points (with ``overrides``), then generated points where the binding lacks them:
    a ragged tail (sizes not multiples of 128), several tiles (two full tiles and a tail: 258 rows
    of partitions, 1,032 elements of an output's free dimension; one tile and a tail when that is
    over the work bound), a reduction or contraction length past 128 (K > 128: a size that
    sizes inputs only), a size-1 edge, and sizes on the side of each of the port's ``bounds``
    (scalar, first value of the upper side) that no point reaches yet."""
    overrides = dict(overrides or {})
    pts = [TestPoint({**p, **overrides}) for p in b.test_points()]
    if overrides:
        pts = pts[:1]
    if not extra:
        return pts
    dims = _shape_scalars(b)
    if not dims:
        return pts
    base = pts[0].values
    if not any(any(int(p.values[d]) % 128 for d in dims) for p in pts):
        pts.append(TestPoint({**base, **{d: int(base[d]) + 1 for d in dims}}, generated=True))
    first, last = _output_dims(b, dims)
    # the tiled axes no point gives two full tiles and a ragged tail yet
    first = {d for d in first if not _multi_tile(pts, d, TWO_TILES[0] - 2, 128)}
    last = {d for d in last if not _multi_tile(pts, d, TWO_TILES[1] - 8, 512)}
    need_p, need_f = bool(first), bool(last)
    candidates = []
    if need_p or need_f:
        # two full tiles and a ragged tail on every tiled axis where the work allows (a path
        # taken only by a middle tile shows), else one full tile and a tail
        # one full tile and a tail is only a fallback where no point has that yet
        have_one = all(_multi_tile(pts, d, 128, 128) for d in first) and all(
            _multi_tile(pts, d, 512, 512) for d in last
        )
        for p_size, f_size in (TWO_TILES,) if have_one else (TWO_TILES, ONE_TILE):
            both = {d: _tiles_of(int(base[d]), f_size, 512) for d in last} if need_f else {}
            both.update(
                {d: _tiles_of(int(base[d]), p_size, 128) for d in first if d not in both}
                if need_p
                else {}
            )
            candidates.append(both)
        if need_p and need_f and not have_one:
            candidates.append({d: max(int(base[d]), ONE_TILE[0]) for d in first})
            candidates.append({d: max(int(base[d]), ONE_TILE[1]) for d in last})
    for big in candidates:
        if _work(b, {**base, **big}) <= MAX_GENERATED_WORK:
            pts.append(TestPoint({**base, **big}, generated=True))
            break
    red = _reduction_dims(b, dims)
    if red and not any(any(int(p.values[d]) > 128 for d in red) for p in pts):
        # a contraction or reduction longer than one partition tile (K > 128)
        longer = {**base, **{d: max(int(base[d]), 130) for d in red}}
        if _work(b, longer) <= MAX_GENERATED_WORK:
            pts.append(TestPoint(longer, generated=True))
    if not any(any(int(p.values[d]) == 1 for d in dims) for p in pts):
        edge = _edge_point(b, base, dims[0])
        if edge is not None:
            pts.append(TestPoint(edge, generated=True))
    return pts + _threshold_points(b, pts, bounds)


#: the largest size tried for the size-1 edge (an output ``n - 8`` long has one element at 9)
_EDGE_SEARCH = 64


def _edge_point(b: Binding, base: Mapping[str, Number], dim: str) -> dict[str, Number] | None:
    """``base`` with ``dim`` at the smallest size where every tensor still has an element
    (1, or 9 for an output ``n - 8`` long: the edge is a single element there), None if no
    size up to :data:`_EDGE_SEARCH` resolves so."""
    for v in range(1, _EDGE_SEARCH + 1):
        point = {**base, dim: v}
        try:
            shapes = b.resolve(point).shapes
        except Exception:  # noqa: BLE001 - outside the binding's size relations: not a point
            continue
        if all(all(d > 0 for d in shape) for shape in shapes.values()):
            return point
    return None


def _multi_tile(pts: Sequence[TestPoint], d: str, full: int, tile: int) -> bool:
    """Some point gives size ``d`` at least ``full`` elements and a ragged tail of ``tile``."""
    return any(int(p.values[d]) > full and int(p.values[d]) % tile for p in pts if d in p.values)


def _tiles_of(size: int, want: int, tile: int) -> int:
    """``want`` (full tiles and a tail), or the binding's own larger size if it has a tail."""
    return size if size > want and size % tile else want


#: at most this many points are added for the port's own thresholds
MAX_THRESHOLD_POINTS = 4


def _threshold_points(
    b: Binding, pts: list[TestPoint], bounds: Sequence[tuple[str, int]]
) -> list[TestPoint]:
    """Per threshold (scalar, boundary) the points do not straddle: one point on its missing side,
    next to the boundary (at most MAX_THRESHOLD_POINTS, each within the work bound)."""
    base = pts[0].values
    added: list[TestPoint] = []
    for name, boundary in bounds:
        if len(added) >= MAX_THRESHOLD_POINTS or name not in base:
            continue
        seen = [int(p.values[name]) for p in pts + added if name in p.values]
        below, above = any(v < boundary for v in seen), any(v >= boundary for v in seen)
        if below and above:
            continue
        value = boundary if not above else boundary - 1
        point = {**base, name: value}
        if value < 1 or _work(b, point) > MAX_GENERATED_WORK:
            continue
        try:
            b.resolve(point)
        except Exception:  # noqa: BLE001 - outside the binding's size relations: not a point
            continue
        added.append(TestPoint(point, generated=True))
    return added
