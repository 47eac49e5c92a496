"""Recognise a block-local compare-exchange sorting network by running the kernel.

A kernel qualifies when it keeps a ``__shared__`` array, synchronises inside a loop, reads one or
two arrays (keys, and values riding with them) and writes as many of the same size, and every
block ``b`` of a launch of ``B`` blocks turns segment ``b`` (``n = size / B`` elements, a power
of two) of its inputs into segment ``b`` of its outputs.  Which network the kernel runs (family,
direction, the comparison each direction swaps on) is decided by running it in the SIMT
interpreter on probe segments -- random keys, 0/1 keys, keys with many ties, and for float keys
signed zeros, infinities and NaN -- with unique values riding along (their order shows every
exchange, ties included) and keeping the one candidate of :mod:`cuda2nki.lift.sortnets` that
reproduces every output bit for bit, at every shape point of the binding.  A comparator network is
deterministic, so reproducing the probe runs exactly pins its behaviour on ties and on the
values NaN and -0.0 take; a kernel no candidate reproduces is not claimed (it stays literal).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from cuda2nki.diagnostics import DiagnosticError, SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift import sortnets as S
from cuda2nki.lift.sortnet_boxes import Box, stage_boxes

#: key and value types a port keeps exact (32-bit integers and fp32)
_DTYPES = ("int32", "uint32", "float32")
#: the largest segment tiled (elements along the free dimension of one partition)
MAX_SEGMENT = 8192
#: seeds per shape point of the binding (one per generated point)
_SEEDS = (0, 1)
#: the most elements a generated probe point may hold (the binding's points always run)
_MAX_PROBE = 1 << 20
#: the most blocks a probe launches (a launch of more runs its first blocks, the arrays cut to
#: them and the elements past the last segment): the kernel cannot tell, or it is not claimed
_PROBE_BLOCKS = 6


@dataclass(frozen=True)
class SortNetwork:
    """A recognised network: ``keys``/``values`` pair each source tensor with its destination
    (binding names); ``stages`` as boxes; ``up``/``down`` the swap predicates."""

    kernel: str
    n: int
    m: int  # keys per sorted chunk (n, or a divisor of it: chunks sorted side by side)
    family: str
    ascending: bool
    keys: tuple[str, str]
    values: tuple[tuple[str, str], ...]
    up: S.Predicate
    down: S.Predicate
    stages: tuple[tuple[Box, ...], ...]
    loc: SourceLoc
    #: the network of the odd-numbered segments where it differs (the block sorts of a global
    #: bitonic sort alternate their direction); None: every segment runs this one
    odd: SortNetwork | None = None


def _shape_ok(fn: A.Function) -> bool:
    """A shared array and a barrier inside a loop."""
    shared = any(
        isinstance(n, A.VarDecl) and n.storage in ("shared", "extern_shared") for n in walk(fn)
    )
    loops = [n for n in walk(fn) if isinstance(n, (A.For, A.While, A.DoWhile))]
    synced = any(
        isinstance(c, A.Call) and "sync" in c.func.lower() for lp in loops for c in walk(lp)
    )
    return shared and synced


def _pairs(binding: object) -> tuple[list, list] | None:
    tensors = list(getattr(binding, "tensors", ()))
    ins = [t for t in tensors if t.role in ("in", "inout")]
    outs = [t for t in tensors if t.role in ("out", "inout")]
    if len(ins) != len(outs) or len(ins) not in (1, 2) or len(tensors) > 4:
        return None
    if any(t.dtype not in _DTYPES for t in tensors):
        return None
    if any(a.dtype != b.dtype for a, b in zip(ins, outs)):
        return None
    return ins, outs


def _sizes_only(binding: object) -> bool:
    """Every scalar is a size (it appears in a shape or the grid): nothing else steers it."""
    texts = [str(g) for g in binding.grid] + [  # type: ignore[attr-defined]
        str(d)
        for t in binding.tensors  # type: ignore[attr-defined]
        for d in t.shape
    ]
    import re

    words = {w for t in texts for w in re.findall(r"[A-Za-z_]\w*", t)}
    return all(s.name in words for s in binding.scalars)  # type: ignore[attr-defined]


def _probe_keys(
    rng: np.random.Generator, dtype: np.dtype, cls: int, n: int, rng_range
) -> np.ndarray:
    if cls == 1:
        return rng.integers(0, 2, n).astype(dtype)
    if cls == 2:
        return rng.integers(0, 4, n).astype(dtype)
    if cls == 3 and dtype.kind == "f":
        pool = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1.0, -1.0], dtype=dtype)
        return pool[rng.integers(0, len(pool), n)]
    if dtype.kind == "f":
        return rng.standard_normal(n).astype(dtype)
    lo, hi = rng_range
    return rng.integers(lo, hi, n, endpoint=True).astype(dtype)


def _range(t: object, dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    lo, hi = (int(info.min), int(info.max)) if info is not None else (0, 0)
    given = getattr(t, "range", None)
    if given is not None:
        try:
            lo, hi = max(lo, int(given[0])), min(hi, int(given[1]))
        except (TypeError, ValueError):
            pass
    return lo, hi


@dataclass
class _Probe:
    keys: np.ndarray  # segments x n, the keys given
    values: list[np.ndarray]  # the other inputs given
    out: dict[str, np.ndarray]  # destination -> segments x n, what the kernel wrote


def _half(probe: _Probe, parity: int) -> _Probe:
    """The probe's even- or odd-numbered segments (rows are segments in block order)."""
    return _Probe(
        probe.keys[parity::2],
        [v[parity::2] for v in probe.values],
        {k: v[parity::2] for k, v in probe.out.items()},
    )


def _inputs(ins: list, blocks: int, n: int, size: int, seed: int) -> list[np.ndarray]:
    """Flat probe inputs: keys of every class by segment (random past the last one), values
    that are unique (their order shows every exchange)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(ins[0].dtype)
    span = _range(ins[0], dtype)
    rows = [_probe_keys(rng, dtype, (b + seed) % 4, n, span) for b in range(blocks)]
    keys = np.concatenate([*rows, _probe_keys(rng, dtype, 0, size - blocks * n, span)])
    values = [(np.arange(size) * 7 + 3).astype(np.dtype(t.dtype)) for t in ins[1:]]
    return [keys, *values]


def _run(tu, name, binding, ins, outs, point, seed, n) -> _Probe | None:  # noqa: ANN001
    """The kernel run on probe inputs at ``point``; None where its blocks do not cover whole
    segments or it changes anything past the last one."""
    from cuda2nki.simt.runner import run_kernel

    r = binding.resolve(point)
    size = int(np.prod(r.shapes[ins[0].name]))
    blocks = r.grid[0] * r.grid[1] * r.grid[2]
    if blocks * n > size or any(int(np.prod(r.shapes[t.name])) != size for t in ins + outs):
        return None
    if blocks > _PROBE_BLOCKS and r.grid[1] == r.grid[2] == 1:  # a few blocks show the network
        size, blocks = size - (blocks - _PROBE_BLOCKS) * n, _PROBE_BLOCKS
        r = dataclasses.replace(r, grid=(blocks, 1, 1))
    given = _inputs(ins, blocks, n, size, seed)
    if blocks == 0:  # nothing runs: the port leaves every element as it was too
        return _Probe(given[0][:0].reshape(0, n), [g[:0].reshape(0, n) for g in given[1:]],
                      {t.name: given[0][:0].reshape(0, n) for t in outs})  # fmt: skip
    args: dict[str, object] = dict(r.scalars)
    for t, arr in zip(ins, given):
        args[t.name] = arr.copy()
    before = {}
    for t, arr in zip(outs, given):
        before[t.name] = arr if t.role == "inout" else np.zeros(size, dtype=np.dtype(t.dtype))
        args[t.name] = before[t.name].copy()
    got = run_kernel(
        tu, name, grid=r.grid, block=r.block, shared_bytes=r.shared_bytes, args=args,
        outputs=[t.name for t in outs], max_steps=1 << 20,
    )  # fmt: skip
    got = {k: np.asarray(v).reshape(-1) for k, v in got.items()}
    end = blocks * n
    if not all(_same(got[t.name][end:], before[t.name][end:]) for t in outs):
        return None
    segs = [a[:end].reshape(blocks, n) for a in given]
    return _Probe(segs[0], segs[1:], {t.name: got[t.name][:end].reshape(blocks, n) for t in outs})


def _points(binding: object) -> list[tuple[dict, tuple[int, ...]]]:
    """(point, seeds) to probe: the binding's shape points, then the first with each scalar one
    larger (a ragged size), doubled and at 1 -- a scalar that sizes the arrays and also steers
    the network (how many merge rounds run) shows as a network that changes between them."""
    points = binding.test_points()  # type: ignore[attr-defined]
    out = [(p, _SEEDS) for p in points]
    seen = list(points)
    for s in binding.scalars:  # type: ignore[attr-defined]
        v = points[0][s.name]
        for w in (v + 1, 2 * v, 1):
            p = {**points[0], s.name: w}
            try:
                r = binding.resolve(p)  # type: ignore[attr-defined]
            except DiagnosticError:
                continue
            if p not in seen and sum(int(np.prod(x)) for x in r.shapes.values()) <= _MAX_PROBE:
                seen.append(p)
                out.append((p, _SEEDS[:1]))
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _fits(stages, probes, order, up, down, outs) -> bool:  # noqa: ANN001
    for p in probes:
        given = [p.keys, *p.values]
        key = given[order[0]]
        rest = tuple(given[i] for i in order[1:])
        k, vs = S.apply(stages, key, rest, up, down)
        want = [None] * len(given)
        want[order[0]] = k
        for i, v in zip(order[1:], vs):
            want[i] = v
        if not all(_same(w, p.out[o.name]) for w, o in zip(want, outs)):
            return False
    return True


def _runs(probes: list[_Probe], out: str, n: int) -> list[tuple[int, bool]]:
    """The chunk lengths and directions the destination ``out`` is sorted in (longest first):
    a kernel may sort each block's segment in several independent chunks."""
    rows = np.concatenate([p.out[out] for p in probes])
    if rows.dtype.kind == "f":
        rows = rows[~np.isnan(rows).any(axis=1)]
    found = []
    m = n
    while m >= 2:
        chunks = rows.reshape(-1, m)
        a, b = chunks[:, :-1], chunks[:, 1:]  # compared, not subtracted: inf - inf is no order
        found += [(m, up) for up, ok in ((True, (a <= b).all()), (False, (a >= b).all())) if ok]
        if found:
            return found
        m //= 2
    return found


def _sorts(probe: _Probe, ins: list, outs: list, n: int) -> bool:
    """Whether some destination holds its source's segments, each a permutation sorted in
    chunks, the even- and the odd-numbered ones each in one direction (the cheap test run on
    the first probe before any other)."""
    return all(_sorted_rows(_half(probe, c), outs, n) for c in (0, 1) if len(probe.keys[c::2]))


def _sorted_rows(probe: _Probe, outs: list, n: int) -> bool:
    given = [probe.keys, *probe.values]
    for src, out in zip(given, outs):
        got = probe.out[out.name]
        bits = np.dtype(f"u{got.dtype.itemsize}")  # a multiset of bit patterns: NaN and -0.0 too
        same = _same(np.sort(got.view(bits), axis=1), np.sort(src.view(bits), axis=1))
        if same and _runs([probe], out.name, n):
            return True
    return False


def _candidates(n: int, ins: list, outs: list, probes: list[_Probe]):  # noqa: ANN202
    orders = [(0,)] if len(ins) == 1 else [(0, 1), (1, 0)]
    for order in orders:
        for m, asc in _runs(probes, outs[order[0]].name, n):
            for family, up_, stages in S.networks(n, m):
                if up_ == asc:
                    yield from _predicates(family, asc, stages, order, m)


def _predicates(family: str, asc: bool, stages, order: tuple, m: int):  # noqa: ANN001, ANN202
    """The candidate with every pair of swap predicates its comparators could take."""
    downs = (
        S.DOWN_PREDICATES if any(not c[2] for st in stages for c in st) else S.DOWN_PREDICATES[:1]
    )
    ups = S.UP_PREDICATES if any(c[2] for st in stages for c in st) else S.UP_PREDICATES[:1]
    for up in ups:
        for down in downs:
            yield family, asc, stages, order, up, down, m


def _segment(binding, ins, points) -> int | None:  # noqa: ANN001
    ns = set()
    for point in points:
        r = binding.resolve(point)
        blocks = r.grid[0] * r.grid[1] * r.grid[2]
        size = int(np.prod(r.shapes[ins[0].name]))
        if blocks <= 0 or size % blocks:
            return None
        ns.add(size // blocks)
    n = ns.pop() if len(ns) == 1 else None
    return n if n is not None and 2 <= n <= MAX_SEGMENT and n & (n - 1) == 0 else None


def recognise(tu: A.TranslationUnit, name: str, binding: object) -> SortNetwork | None:
    """The sorting network kernel ``name`` runs, or None where it is not one (or no candidate
    reproduces it exactly)."""
    fn = tu.function(name)
    if fn is None or binding is None or not _shape_ok(fn) or not _sizes_only(binding):
        return None
    pairs = _pairs(binding)
    if pairs is None:
        return None
    ins, outs = pairs
    try:
        n = _segment(binding, ins, binding.test_points())  # type: ignore[attr-defined]
        if n is None:
            return None
        runs = [(pt, seed) for pt, seeds in _points(binding) for seed in seeds]
        # per parity of the segment number, the candidates every run so far leaves
        left: list[list | None] = [None, None]
        for i, (pt, seed) in enumerate(runs):
            got = _run(tu, name, binding, ins, outs, pt, seed, n)
            if got is None or (i == 0 and not _sorts(got, ins, outs, n)):
                return None  # the first run already shows no sort: no more runs
            for c in (0, 1):
                left[c] = _narrowed(left[c], _half(got, c), n, ins, outs)
            if left[0] == [] or left[1] == []:
                return None
    except Exception:  # noqa: BLE001 - whatever stops the probe runs, the kernel is not claimed
        return None
    return _claimed(fn, name, n, ins, outs, left[0] or [], left[1])


def _narrowed(left: list | None, probe: _Probe, n: int, ins: list, outs: list) -> list | None:
    """The candidates of ``left`` that reproduce ``probe`` (of those it suggests, for the first
    probe with segments of the parity; None while there has been none)."""
    if not len(probe.keys):
        return left
    if left is None:
        left = list(_candidates(n, ins, outs, [probe]))
    return [c for c in left if _fits_one(c, probe, outs)]


def _claimed(fn, name, n, ins, outs, even: list, odd: list | None):  # noqa: ANN001, ANN202
    """One network for every segment where a candidate fits both parities, else one per parity
    (the same keys and values)."""
    if not even:
        return None
    same = even if odd is None else [c for c in even if _key(c) in {_key(o) for o in odd}]
    if same:
        return _network(fn, name, n, ins, outs, same[0])
    odd = [c for c in odd or () if c[3] == even[0][3]]
    first = _network(fn, name, n, ins, outs, even[0])
    other = _network(fn, name, n, ins, outs, odd[0]) if odd else None
    if first is None or other is None:
        return None
    return dataclasses.replace(first, odd=other)


def _key(cand: tuple) -> tuple:
    family, asc, _, order, up, down, m = cand
    return family, asc, order, up, down, m


def _fits_one(cand: tuple, probe: _Probe, outs: list) -> bool:
    _, _, stages, order, up, down, _ = cand
    return _fits(stages, [probe], order, up, down, outs)


def _network(fn: A.Function, name: str, n: int, ins: list, outs: list, cand: tuple):  # noqa: ANN202
    family, asc, stages, order, up, down, m = cand
    boxes = tuple(stage_boxes(st) for st in stages)
    if any(b is None for b in boxes):
        return None
    key = (ins[order[0]].name, outs[order[0]].name)
    vals = tuple((ins[i].name, outs[i].name) for i in order[1:])
    return SortNetwork(name, n, m, family, asc, key, vals, up, down, boxes, fn.loc)  # type: ignore[arg-type]
