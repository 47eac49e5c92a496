"""Judging the difference between a port's output and the CUDA reference.

Three views of the same difference (PRIOR_ART §4.5): elementwise against a componentwise
tolerance ``tol`` (an array broadcastable to the output, usually the IR-derived error bound),
normwise relative L2 error, and the mismatch percentage with the contiguous mismatch regions
mapped to port tiles (128 partitions x 512 free elements).  Then a classification, with evidence:

* ``expected`` -- every element within the tolerance;
* ``precision`` -- outside the fp32 tolerance but inside the one for a narrower input or
  accumulation dtype (``alt_tols``), e.g. bf16 accumulation;
* ``defect`` -- with the most specific structure that explains it: ``unwritten`` (NaN canaries
  left), ``tail`` (only the ragged end past the last full tile is wrong), ``transposed``,
  ``shifted``, ``scaled``, ``tiles`` (some tiles wrong), ``nonfinite``, ``wrong`` (everywhere).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda2nki import limbs

PARTITION_TILE = 128
FREE_TILE = 512


@dataclass(frozen=True)
class Region:
    """A box of mismatching elements (inclusive-exclusive bounds per dimension of the 2-D view)."""

    start: tuple[int, ...]
    stop: tuple[int, ...]
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"start": list(self.start), "stop": list(self.stop), "count": self.count}


@dataclass(frozen=True)
class Comparison:
    name: str
    shape: tuple[int, ...]
    max_abs: float
    max_rel: float
    normwise: float
    mismatch_pct: float
    mismatches: int
    tolerance_max: float
    classification: str  # expected | precision | defect
    defect: str | None = None
    evidence: str = ""
    regions: tuple[Region, ...] = ()
    tiles: tuple[tuple[int, int], ...] = ()  # (partition tile, free tile) indices with mismatches
    worst_index: tuple[int, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.classification == "expected"

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": self.name,
            "shape": list(self.shape),
            "max_abs_error": self.max_abs,
            "max_rel_error": self.max_rel,
            "normwise_error": self.normwise,
            "mismatch_pct": self.mismatch_pct,
            "mismatches": self.mismatches,
            "tolerance_max": self.tolerance_max,
            "classification": self.classification,
            "defect": self.defect,
            "evidence": self.evidence,
            "regions": [r.to_dict() for r in self.regions],
            "tiles": [list(t) for t in self.tiles],
            "worst_index": list(self.worst_index),
            **self.extra,
        }


def as_2d(a: np.ndarray) -> np.ndarray:
    """The partition-major view a port tiles: rows = first axis, columns = the rest flattened."""
    a = np.asarray(a)
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(-1, 1)
    return a.reshape(a.shape[0], -1)


def within(actual: np.ndarray, expected: np.ndarray, tol: np.ndarray | float) -> np.ndarray:
    """Elementwise pass mask; NaN in the reference must be matched by NaN (or it fails)."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ok = np.abs(a - e) <= tol
    both_nan = np.isnan(a) & np.isnan(e)
    same_inf = np.isinf(a) & np.isinf(e) & (np.sign(a) == np.sign(e))
    return ok | both_nan | same_inf


def compare(
    name: str,
    actual: np.ndarray,
    expected: np.ndarray,
    tol: np.ndarray | float,
    *,
    alt_tols: Mapping[str, np.ndarray | float] | None = None,
    canary_nan: bool = True,
    unwritten: np.ndarray | None = None,
    dont_care: np.ndarray | None = None,
    overflow: float | None = None,
) -> Comparison:
    """Compare one output.  ``alt_tols`` maps a precision hypothesis (e.g. "bf16 accumulation")
    to the tolerance that hypothesis would allow; ``overflow``, the largest finite value of the
    output's dtype (see :func:`largest_finite`)."""
    a = limbs.as_float_exactly(actual, expected)
    e = np.asarray(expected, dtype=np.float64)
    if a.size != e.size:
        return Comparison(
            name,
            tuple(e.shape),
            float("inf"),
            float("inf"),
            float("inf"),
            100.0,
            e.size,
            _tmax(tol),
            "defect",
            "shape",
            f"port output has {a.size} elements, expected {e.size}",
        )
    a = a.reshape(e.shape)
    tol_arr = np.broadcast_to(np.asarray(tol, dtype=np.float64), e.shape)
    ok = within(a, e, tol_arr)
    # where the bound is infinite the reference is unknowable at this input (the square root of
    # a sum that cancels to about zero is NaN or not by its rounding order): NaN on one side only
    # is no mismatch there, unless the port's NaN marks an element it never wrote
    unknowable = np.isinf(tol_arr) & (np.isnan(a) != np.isnan(e))
    if unwritten is not None:
        unknowable &= ~np.asarray(unwritten, dtype=bool).reshape(e.shape)
    ok |= unknowable
    if overflow is not None:
        ok |= overflowed(a, e, tol_arr, overflow)
    if dont_care is not None:  # elements the CUDA kernel never writes: any port value will do
        ok |= np.asarray(dont_care, dtype=bool).reshape(e.shape)
        a = np.where(ok & ~within(a, e, tol_arr), e, a)
    bad = ~ok
    n_bad = int(bad.sum())
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(np.isfinite(a) & np.isfinite(e), np.abs(a - e), np.inf)
    diff = np.where(ok & ~np.isfinite(diff), 0.0, diff)
    max_abs = float(diff.max()) if diff.size else 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = diff / np.maximum(np.abs(e), np.finfo(np.float64).tiny)
    max_rel = float(np.nanmax(rel)) if rel.size else 0.0
    normwise = _normwise(a, e)
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), e.shape)) if e.size else ()
    base = dict(
        name=name,
        shape=tuple(e.shape),
        max_abs=max_abs,
        max_rel=max_rel,
        normwise=normwise,
        mismatch_pct=round(100.0 * n_bad / max(e.size, 1), 4),
        mismatches=n_bad,
        tolerance_max=_tmax(tol_arr),
        worst_index=worst,
    )
    if n_bad == 0:
        return Comparison(
            **base, classification="expected", evidence="every element within the derived tolerance"
        )
    regions, tiles = localise(bad)
    base["extra"] = {"tile_grid": tile_grid(bad)}
    # a narrower precision spreads error over every tile; mismatches confined to some tiles are
    # a defect in those iterations even when their size would fit a bf16 bound
    b2 = as_2d(bad)
    all_tiles = -(-b2.shape[0] // PARTITION_TILE) * -(-b2.shape[1] // FREE_TILE)
    spread = len(tiles) == all_tiles
    # every narrower-precision hypothesis whose bound covers the error, tightest first (the
    # static findings C2N5004/C2N5005 say which narrowing the port actually does)
    explains = [
        label
        for label, alt in sorted((alt_tols or {}).items(), key=lambda kv: _mean_bound(kv[1]))
        if spread
        and np.isfinite(a).all()
        and within(a, e, np.broadcast_to(np.asarray(alt, dtype=np.float64), e.shape)).all()
    ]
    if explains:
        also = f" (also within the bound for {', '.join(explains[1:])})" if explains[1:] else ""
        return Comparison(
            **base,
            classification="precision",
            defect=None,
            regions=regions,
            tiles=tiles,
            evidence=f"outside the fp32 tolerance but within the bound for {explains[0]}{also}",
        )
    kind, evidence = classify_defect(
        a,
        e,
        bad,
        tol_arr,
        canary_nan=canary_nan,
        unwritten=None if unwritten is None else np.asarray(unwritten).reshape(e.shape),
    )
    return Comparison(
        **base,
        classification="defect",
        defect=kind,
        evidence=evidence,
        regions=regions,
        tiles=tiles,
    )


def largest_finite(arr: Any) -> float | None:
    """The largest finite value of ``arr``'s floating dtype (None: not a floating dtype)."""
    dt = np.asarray(arr).dtype
    if dt.kind != "f":
        return None
    return float(np.finfo(dt).max)


def overflowed(a: np.ndarray, e: np.ndarray, tol: np.ndarray, largest: float) -> np.ndarray:
    """Where the port's infinity is a value within the bound: the reference is finite, of the
    same sign, and its bound reaches past the largest finite value of the output's dtype, so
    the exact result may lie beyond it (a port summing in more precision than the kernel, whose
    narrow partial sums lose what takes the total past the limit, rounds it to infinity)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (
            np.isinf(a) & np.isfinite(e) & (np.sign(a) == np.sign(e)) & (np.abs(e) + tol > largest)
        )


def _mean_bound(tol: Any) -> float:
    t = np.asarray(tol, dtype=np.float64)
    finite = t[np.isfinite(t)]
    return float(finite.mean()) if finite.size else float("inf")


def _tmax(tol: Any) -> float:
    t = np.asarray(tol, dtype=np.float64)
    return float(t.max()) if t.size else 0.0


def _normwise(a: np.ndarray, e: np.ndarray) -> float:
    fin = np.isfinite(a) & np.isfinite(e)
    if not fin.all():
        return float("inf")
    den = float(np.linalg.norm(e.ravel()))
    num = float(np.linalg.norm((a - e).ravel()))
    return num / den if den > 0 else (0.0 if num == 0 else float("inf"))


def localise(
    bad: np.ndarray, max_regions: int = 8
) -> tuple[tuple[Region, ...], tuple[tuple[int, int], ...]]:
    """Contiguous mismatch regions (row runs merged into boxes) and the port tiles they touch."""
    b2 = as_2d(bad)
    rows = np.flatnonzero(b2.any(axis=1))
    regions: list[Region] = []
    if rows.size:
        breaks = np.flatnonzero(np.diff(rows) > 1)
        starts = np.concatenate(([rows[0]], rows[breaks + 1]))
        stops = np.concatenate((rows[breaks], [rows[-1]])) + 1
        for r0, r1 in zip(starts, stops):
            block = b2[r0:r1]
            cols = np.flatnonzero(block.any(axis=0))
            regions.append(
                Region((int(r0), int(cols[0])), (int(r1), int(cols[-1]) + 1), int(block.sum()))
            )
    regions.sort(key=lambda r: -r.count)
    pr, fr = np.nonzero(b2)
    tiles = sorted({(int(p), int(f)) for p, f in zip(pr // PARTITION_TILE, fr // FREE_TILE)})
    return tuple(regions[:max_regions]), tuple(tiles)


def tile_grid(bad: np.ndarray, max_cells: int = 4096) -> list[list[int]]:
    """Mismatch counts per (partition tile, free tile) of the 2-D view; empty when too many tiles."""
    b2 = as_2d(bad)
    p = -(-b2.shape[0] // PARTITION_TILE)
    f = -(-b2.shape[1] // FREE_TILE)
    if p * f > max_cells or p * f == 0:
        return []
    pr, fr = np.nonzero(b2)
    grid = np.zeros((p, f), dtype=np.int64)
    np.add.at(grid, (pr // PARTITION_TILE, fr // FREE_TILE), 1)
    return grid.tolist()


def classify_defect(
    a: np.ndarray,
    e: np.ndarray,
    bad: np.ndarray,
    tol: np.ndarray,
    *,
    canary_nan: bool = True,
    unwritten: np.ndarray | None = None,
) -> tuple[str, str]:
    """The most specific structured explanation of a mismatch.

    ``unwritten`` marks elements that still hold the simulator's poison canary; without it, any
    NaN where the reference is finite is taken for a canary when ``canary_nan`` is set.
    """
    if unwritten is not None:
        nan_port = unwritten & ~np.isnan(e)
        if nan_port.any() and not (bad & ~nan_port).any():
            return (
                "unwritten",
                f"{int(nan_port.sum())} elements never written (NaN canaries left){_where(nan_port)}",
            )
        nan_port = np.zeros_like(bad)
    else:
        nan_port = np.isnan(a) & ~np.isnan(e)
    if unwritten is None and canary_nan and nan_port.any() and (nan_port == bad).all():
        return (
            "unwritten",
            f"{int(nan_port.sum())} elements never written (NaN canaries left){_where(nan_port)}",
        )
    tail = _tail_only(bad)
    if tail:
        return "tail", tail
    if e.ndim >= 2 and e.shape[-1] == e.shape[-2] and within(np.swapaxes(a, -1, -2), e, tol).all():
        return "transposed", "the port's output equals the transpose of the reference"
    shifted = _shift(a, e, tol)
    if shifted:
        return "shifted", shifted
    scale = _scale(a, e, tol)
    if scale:
        return "scaled", scale
    if (~np.isfinite(a) & np.isfinite(e)).any():
        return (
            "nonfinite",
            f"{int((~np.isfinite(a) & np.isfinite(e)).sum())} non-finite values where the reference is finite",
        )
    b2 = as_2d(bad)
    n_ptiles = -(-b2.shape[0] // PARTITION_TILE)
    n_ftiles = -(-b2.shape[1] // FREE_TILE)
    _, tiles = localise(bad)
    if len(tiles) < n_ptiles * n_ftiles:
        return (
            "tiles",
            f"mismatches confined to {len(tiles)} of {n_ptiles * n_ftiles} tiles (partition, free): {list(tiles)[:8]}",
        )
    return (
        "wrong",
        f"{int(bad.sum())} of {bad.size} elements differ beyond tolerance across all tiles",
    )


def _where(mask: np.ndarray) -> str:
    regions, _ = localise(mask, max_regions=1)
    if not regions:
        return ""
    r = regions[0]
    return f"; largest region rows {r.start[0]}..{r.stop[0] - 1}, columns {r.start[1]}..{r.stop[1] - 1} of the 2-D view"


def _tail_only(bad: np.ndarray) -> str:
    """Mismatches only past the last full 128-row (or 512-column) tile of a ragged shape."""
    b2 = as_2d(bad)
    rows, cols = b2.shape
    for axis, size, tile in ((0, rows, PARTITION_TILE), (1, cols, FREE_TILE)):
        full = (size // tile) * tile
        if size % tile == 0 or full == 0:
            continue
        head = b2[:full] if axis == 0 else b2[:, :full]
        if not head.any():
            what = "rows" if axis == 0 else "columns"
            return (
                f"only the ragged tail is wrong: {what} {full}..{size - 1} (past the last full tile of {tile}); "
                f"a missing tail mask or min()-bounded slice"
            )
    return ""


def _shift(a: np.ndarray, e: np.ndarray, tol: np.ndarray) -> str:
    flat_a, flat_e, flat_t = a.ravel(), e.ravel(), tol.ravel()
    n = flat_e.size
    for s in (1, -1, PARTITION_TILE, -PARTITION_TILE, FREE_TILE, -FREE_TILE):
        if abs(s) >= n or n < 4:
            continue
        if s > 0:
            seg_ok = within(flat_a[s:], flat_e[:-s], flat_t[s:])
        else:
            seg_ok = within(flat_a[:s], flat_e[-s:], flat_t[:s])
        if seg_ok.mean() > 0.98:
            return f"the port's output is the reference shifted by {s} elements (off-by-one or tile offset error)"
    return ""


def _scale(a: np.ndarray, e: np.ndarray, tol: np.ndarray) -> str:
    fin = np.isfinite(a) & np.isfinite(e)
    if not fin.all():
        return ""
    den = float(np.dot(e.ravel(), e.ravel()))
    if den == 0:
        return ""
    c = float(np.dot(a.ravel(), e.ravel())) / den
    if abs(c - 1.0) < 1e-6 or c == 0:
        return ""
    if within(a, c * e, tol * max(1.0, abs(c))).all():
        return f"the port's output is the reference scaled by {c:.6g}"
    return ""


def vacuity_probes(expected: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Wrong answers that any meaningful tolerance must reject."""
    e = np.asarray(expected, dtype=np.float64)
    probes = {"zeros": np.zeros_like(e), "negated": -e}
    if e.size > 1:
        probes["shuffled"] = rng.permutation(e.ravel()).reshape(e.shape)
    return probes


def vacuous(expected: np.ndarray, tol: np.ndarray | float, rng: np.random.Generator) -> list[str]:
    """Names of the probes that *pass* the tolerance (any means the tolerance is vacuous).

    A probe equal to the reference (e.g. negating an all-zero output) says nothing and is skipped.
    """
    e = np.asarray(expected, dtype=np.float64)
    passed = []
    for label, probe in vacuity_probes(e, rng).items():
        if np.array_equal(probe, e, equal_nan=True):
            continue
        if within(probe, e, tol).all():
            passed.append(label)
    return passed


_REDUCTIONS = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean}


def wrong_axis(actual: np.ndarray, expected: np.ndarray, inputs: Mapping[str, np.ndarray]) -> str:
    """Evidence that a port reduced a 2-D input along the other axis than the CUDA kernel did.

    The reference must equal ``op(X, axis=a)`` for some input ``X`` and reduction ``op``, and the
    elements the port wrote must equal ``op(X, axis=1-a)`` (the port's output may be shorter or
    partly unwritten when the two axes differ in length).
    """
    a = np.asarray(actual, dtype=np.float64).ravel()
    e = np.asarray(expected, dtype=np.float64).ravel()
    written = np.isfinite(a)
    if written.sum() < max(2, a.size // 4):
        return ""
    for name, x in inputs.items():
        x = np.asarray(x)
        if x.ndim != 2 or x.dtype.kind not in "fV":
            continue
        x64 = x.astype(np.float64)
        for label, op in _REDUCTIONS.items():
            for axis in (0, 1):
                ref_cand = op(x64, axis=axis)
                if ref_cand.size != e.size or not _close(e, ref_cand):
                    continue
                other = op(x64, axis=1 - axis)
                n = min(other.size, a.size)
                w = written[:n]
                if n and w.any() and _close(a[:n][w], other[:n][w]):
                    return (
                        f"the port computes {label}({name}, axis={1 - axis}) where the CUDA kernel computes "
                        f"{label}({name}, axis={axis}): wrong reduction axis"
                    )
    return ""


def _close(x: np.ndarray, y: np.ndarray) -> bool:
    scale = float(np.median(np.abs(y))) if y.size else 1.0
    return bool(np.all(np.abs(x - y) <= 1e-3 * (np.abs(y) + scale) + 1e-6))
