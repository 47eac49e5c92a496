"""Add-only networks in shared memory (Blelloch up-sweep / down-sweep scans, Brent-Kung scans,
in-place trees), recognised by running the write log on coefficient vectors.

Resolving such a network read by read builds select chains over every earlier write (each
element is rewritten ``log2(B)`` times in place), which no work budget covers.  Instead, for the
concrete block size, the write log runs once with every shared element held as a vector of
integer coefficients over the *staged* elements (what the writes before the first one reading
the array stored), run-length encoded (the partial sums of a scan network are ranges, so a
vector is a run or two whatever the block size): a staged element is a unit vector, ``A[b] = A[b] + A[a]`` adds vectors,
``A[a] = A[b]`` copies one, ``A[m - 1] = 0`` clears it.  The thread-coordinate guards and indices
are evaluated per thread, and every barrier interval is checked for races (an element written by
one thread and read or written by another between the same barriers): a racy network is not
recognised.  A read whose vector, for every reading thread ``t``, is 1 exactly on a range
``[lo(t), hi(t))`` with ``lo`` and ``hi`` affine in ``t`` is the fold ``sum_{lo <= j < hi}
staged(j)`` -- the exclusive prefix (``hi = t``), the inclusive one (``hi = t + 1``) or the
whole chunk (a Blelloch root before it is cleared) -- with ``staged(j)`` one expression of the
element index ``j`` that every staging write agrees with.  Float sums differ from a sequential
prefix only by reassociation.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly

_T = "threadIdx.x"
#: the largest network analysed (thread-writes), and the most runs one vector may have (a tree
#: reduction's partial sums are strided: up to half the block's elements in runs of one)
_MAX_WORK = 400_000
_MAX_RUNS = 2048
#: coefficients beyond this are not followed (a network doubling values, not summing them)
_MAX_COEFF = 1 << 20


@dataclass(frozen=True)
class Network:
    """The log of one shared array run on coefficient vectors: ``hist`` holds, per staged array
    element (padded layouts stage into a subset of the array), the write indices that changed it
    and the vector each left (``((lo, hi, coeff), ...)``: ``coeff`` on the staged elements
    ``lo <= j < hi``); ``staged`` is the value of staged element ``var``."""

    first: int
    hist: dict  # element -> ([write index, ...], [vector, ...])
    writers: dict  # element -> [(epoch, thread)] of its writes
    staged: V.DExpr
    var: str
    sync: _Sync


class _NotNetwork(Exception):
    pass


@dataclass(frozen=True)
class _Sync:
    """What orders two accesses: a ``__syncthreads`` between them, or -- threads of one warp --
    a ``__syncwarp`` (``warp_epochs``: the epochs a ``__syncwarp`` began)."""

    warp_epochs: frozenset

    def segment(self, epoch: int) -> int:
        """The interval between two block barriers ``epoch`` lies in."""
        return epoch - sum(1 for w in self.warp_epochs if w <= epoch)

    def races(self, writes: list, reads: list) -> bool:
        """Whether the accesses to one element (``(epoch, thread)`` lists) race: a write and
        another thread's access with neither barrier between them."""
        groups: dict = {}
        for (e, t), w in [(a, True) for a in writes] + [(a, False) for a in reads]:
            groups.setdefault(self.segment(e), []).append((e, t, w))
        for acc in groups.values():
            wrote = {t // 32 for _, t, w in acc if w}
            if wrote and len({t // 32 for _, t, _ in acc}) > 1:
                return True  # another warp between the same block barriers
            epochs: dict = {}
            for e, t, w in acc:
                ts, ws = epochs.setdefault(e, (set(), [False]))
                ts.add(t)
                ws[0] = ws[0] or w
            if any(ws[0] and len(ts) > 1 for ts, ws in epochs.values()):
                return True  # another thread of the warp between the same barriers
        return False


def analyse(arr, block: tuple | None, var: str, warp_epochs=frozenset()) -> Network | None:
    """``arr``'s write log as an add-only network over staged elements, or None."""
    try:
        return _analyse(arr, block, var, _Sync(frozenset(warp_epochs)))
    except _NotNetwork:
        return None


def read(net: Network, r: V.SRead, block: tuple) -> V.DExpr | None:
    """``r`` as a fold of the staged elements over one range per reading thread, or None."""
    if r.upto < net.first or r.ctx or len(r.index) != 1:
        return None
    idx = r.index[0]
    x = V.reader_coords(r)[0]  # the block is one-dimensional: y and z are 0
    if not _thread_only(idx) or not _thread_only(x):
        return None
    live = r.live if r.live is not None else af.TRUE
    los: dict = {}
    his: dict = {}
    for t in range(block[0]):
        env = {_T: t}
        if not _may_hold(live, env):
            continue
        reader = x.evaluate(env)
        e = idx.evaluate(env)
        if e not in net.hist:
            return None
        if net.sync.races(net.writers.get(e, []), [(r.epoch, reader)]):
            return None  # written by another thread with no barrier between
        got = _range(_as_of(net.hist[e], r.upto))
        if got is None:
            return None
        los[t], his[t] = got
    if not los:
        return None
    lo, hi = _affine(los), _affine(his)
    if lo is None or hi is None:
        return None
    if (hi - lo).is_const and (hi - lo).const_value == 1:
        return V.subs_poly(net.staged, {net.var: lo})
    # folds start at 0 (the intent lowering reads a fold's extent from its stop)
    body = V.subs_poly(net.staged, {net.var: af.sym(net.var) + lo}) if lo != af.ZERO else net.staged
    return V.Fold(net.staged.dtype, "add", net.var, af.ZERO, hi - lo, af.ONE, body)


# --------------------------------------------------------------------------- the log


def _analyse(arr, block: tuple | None, var: str, sync: _Sync) -> Network:
    if not block or block[1:] != (1, 1) or len(arr.dims) != 1:
        raise _NotNetwork
    writes = arr.writes
    first = next((k for k, w in enumerate(writes) if _reads(w.value, arr.name)), None)
    if not first:
        raise _NotNetwork
    if any(w.loops or w.accumulate is not None or len(w.index) != 1 for w in writes):
        raise _NotNetwork
    nthreads = block[0]
    if nthreads * (len(writes) - first) > _MAX_WORK:
        raise _NotNetwork
    staged, rank, writers = _staging(writes[:first], nthreads, var)
    if arr.dims[0] is not None and max(rank) >= arr.dims[0]:
        raise _NotNetwork
    hist = {e: ([first - 1], [((j, j + 1, 1),)]) for e, j in rank.items()}
    readers: dict = {}
    log = _Log(hist, arr.name, nthreads, writers, readers)
    for k in range(first, len(writes)):
        log.step(writes[k], k)
    for e in set(writers) | set(readers):
        if sync.races(writers.get(e, []), readers.get(e, [])):
            raise _NotNetwork  # an access racing another thread's write
    return Network(first, hist, writers, staged, var, sync)


@dataclass(frozen=True)
class _Log:
    hist: dict
    name: str
    nthreads: int
    writers: dict
    readers: dict

    def element(self, p: Poly, env: dict) -> int:
        e = p.evaluate(env)
        if e not in self.hist:
            raise _NotNetwork  # outside the staged elements
        return e

    def step(self, w, k: int) -> None:
        """Write ``k``: every thread whose guard holds writes at once (its reads see the writes
        before their own ``upto``)."""
        terms = _linear(w.value, self.name)
        if terms is None or not _thread_only(w.index[0]) or not _thread_cond(w.guard):
            raise _NotNetwork
        for _, r in terms:
            if r.upto > k or r.who or len(r.index) != 1 or not _thread_only(r.index[0]):
                raise _NotNetwork
        done: dict = {}
        for t in range(self.nthreads):
            env = {_T: t}
            if not _holds(w.guard, env):
                continue
            e = self.element(w.index[0], env)
            if e in done:
                raise _NotNetwork  # two threads write one element at once
            vec: tuple = ()
            for sign, r in terms:
                x = self.element(r.index[0], env)
                vec = _vadd(vec, _as_of(self.hist[x], r.upto), sign)
                self.readers.setdefault(x, []).append((r.epoch, t))
            done[e] = vec
            self.writers.setdefault(e, []).append((w.epoch, t))
        for e, vec in done.items():
            self.hist[e][0].append(k)
            self.hist[e][1].append(vec)


def _as_of(h: tuple, upto: int) -> tuple:
    """The vector an element held once the first ``upto`` writes were done."""
    keys, vecs = h
    at = bisect.bisect_left(keys, upto) - 1
    if at < 0:
        raise _NotNetwork
    return vecs[at]


def _vadd(a: tuple, b: tuple, sign: int) -> tuple:
    """``a + sign * b`` on run-length vectors (a sweep over the runs' ends)."""
    if not b:
        return a
    delta: dict = {}
    for vec, f in ((a, 1), (b, sign)):
        for lo, hi, c in vec:
            delta[lo] = delta.get(lo, 0) + f * c
            delta[hi] = delta.get(hi, 0) - f * c
    out: list = []
    level = 0
    cuts = sorted(delta)
    for lo, hi in zip(cuts, cuts[1:]):
        level += delta[lo]
        if level == 0:
            continue
        if abs(level) > _MAX_COEFF:
            raise _NotNetwork  # doubling past what is followed
        if out and out[-1][1] == lo and out[-1][2] == level:
            out[-1] = (out[-1][0], hi, level)
        else:
            out.append((lo, hi, level))
    if len(out) > _MAX_RUNS:
        raise _NotNetwork
    return tuple(out)


def _linear(v: V.DExpr, name: str) -> list | None:
    """``v`` as signed reads of ``name`` (sums, differences, copies, a zero), or None."""
    if isinstance(v, V.SRead):
        return [(1, v)] if v.array == name else None
    if isinstance(v, V.Const):
        return [] if v.value == 0 else None
    if isinstance(v, V.Op) and v.op in ("add", "sub") and len(v.args) == 2:
        a, b = (_linear(x, name) for x in v.args)
        if a is None or b is None:
            return None
        if v.op == "sub":
            b = [(-s, r) for s, r in b]
        return a + b
    return None


# --------------------------------------------------------------------------- staging


def _staging(writes: list, nthreads: int, var: str) -> tuple:
    """The staged value as one expression of the staged element ``var``, each array element's
    staged element (-1 where none: the staged elements are the written ones in array order) and
    who wrote them (element -> ``[(epoch, thread)]``)."""
    groups: dict = {}
    for w in writes:
        groups.setdefault(w.index[0], []).append(w)
    writers: dict = {}
    owner: dict = {}
    for p, ws in groups.items():
        if not _thread_only(p) or len({w.epoch for w in ws}) != 1:
            raise _NotNetwork
        for t in range(nthreads):
            e = p.evaluate({_T: t})
            if e in owner or e < 0:
                raise _NotNetwork
            owner[e] = t
            writers.setdefault(e, []).append((ws[0].epoch, t))
    if not owner:
        raise _NotNetwork
    rank = {e: k for k, e in enumerate(sorted(owner))}
    staged = None
    for p, ws in groups.items():
        value = _chain(ws)
        fit = _affine({t: rank[p.evaluate({_T: t})] for t in range(nthreads)})
        if fit is None:
            raise _NotNetwork  # staged elements not an affine function of the thread
        a, c = af.coefficient(fit, _T), fit - af.coefficient(fit, _T) * af.sym(_T)
        if a == af.ZERO:
            raise _NotNetwork
        f = _rebase(value, a.const_value, c.const_value, var)
        if staged is None:
            staged = f
        if V.simplify(V.subs_poly(staged, {var: fit})) != V.simplify(value):
            raise _NotNetwork  # the staging writes do not agree on one expression of ``var``
    return staged, rank, writers


def _chain(ws: list) -> V.DExpr:
    """The value the writes to one element leave (later writes win where their guard holds);
    every thread must have written it."""
    value: V.DExpr | None = None
    for w in ws:
        if w.guard == af.TRUE:
            value = w.value
        elif value is None:
            value = V.Select(w.value.dtype, V.Pred("bool", w.guard), w.value, _UNSET)
        else:
            value = V.Select(w.value.dtype, V.Pred("bool", w.guard), w.value, value)
    value = _settle(V.simplify(value))
    if any(n is _UNSET or n == _UNSET for n in V.walk(value)):
        raise _NotNetwork
    return value


_UNSET = V.Undef("float32")


def _settle(v: V.DExpr) -> V.DExpr:
    """``c ? x : (!c ? y : unset)`` -> ``c ? x : y`` (an ``if``/``else`` staging the element)."""
    if not isinstance(v, V.Select) or not isinstance(v.cond, V.Pred):
        return v
    inner = v.else_
    if (
        isinstance(inner, V.Select)
        and isinstance(inner.cond, V.Pred)
        and inner.else_ == _UNSET
        and inner.cond.cond == v.cond.cond.negate()
    ):
        return V.Select(v.dtype, v.cond, v.then, inner.then)
    return v


def _rebase(value: V.DExpr, a: int, c: int, var: str) -> V.DExpr:
    if any(isinstance(n, (V.SRead, V.Fold, V.Carried, V.Undef)) for n in V.walk(value)):
        raise _NotNetwork
    got = rebase(value, a, c, var)
    if got is None:
        raise _NotNetwork
    return got


def rebase(value: V.DExpr, a: int, c: int, var: str, t: str = _T) -> V.DExpr | None:
    """``value`` (of the thread ``t`` that handles element ``a*t + c``) as an expression of the
    element ``var``, or None unless every polynomial uses ``t`` as a multiple of ``a*t``."""
    from cuda2nki.lift.finalize import _map_polys

    if any(
        isinstance(n, V.Fold) and (t in n.start.atoms() or t in n.step.atoms())
        for n in V.walk(value)
    ):
        return None
    try:
        return V.simplify(_map_polys(value, lambda p: rebase_poly(p, a, c, var, t)))
    except _NotNetwork:
        return None


def rebase_poly(p: Poly, a: int, c: int, var: str, t: str = _T) -> Poly:
    """``p`` with ``t = (var - c) / a`` (:class:`_NotNetwork` unless exact)."""
    q = af.coefficient(p, t)
    rest = p - q * af.sym(t)
    if q == af.ZERO:
        if t in p.atoms():
            raise _NotNetwork
        return p
    if not q.is_const or q.const_value % a or t in rest.atoms():
        raise _NotNetwork
    return rest + (af.sym(var) - c) * (q.const_value // a)


# --------------------------------------------------------------------------- helpers


def _reads(v: V.DExpr, name: str) -> bool:
    return any(isinstance(n, V.SRead) and n.array == name for n in V.walk(v))


def _thread_only(p: Poly) -> bool:
    """``p`` depends on ``threadIdx.x`` alone (through divisions and remainders too)."""
    return all(a == _T or isinstance(a, (af.DivAtom, af.ModAtom)) for a in p.atoms())


def _thread_cond(c: Cond) -> bool:
    return all(a == _T or isinstance(a, (af.DivAtom, af.ModAtom)) for a in c.atoms())


def _holds(c: Cond, env: dict) -> bool:
    try:
        return af.holds(c, env)
    except ValueError:
        raise _NotNetwork from None


def _may_hold(c: Cond, env: dict) -> bool:
    """False only where a conjunct over the thread coordinate alone is false for ``env``."""
    parts = c.conjuncts()
    if parts is None:
        return not _thread_cond(c) or _holds(c, env)
    return all(not _thread_only(p.poly) or _holds(Cond.of(p), env) for p in parts)


def _range(vec: tuple) -> tuple[int, int] | None:
    """``(lo, hi)`` where ``vec`` is 1 on ``[lo, hi)`` and 0 elsewhere."""
    if not vec:
        return 0, 0
    if len(vec) != 1 or vec[0][2] != 1:
        return None
    return vec[0][0], vec[0][1]


def _affine(vals: dict) -> Poly | None:
    """The affine polynomial in ``threadIdx.x`` through ``vals`` (thread -> int), or None."""
    ts = sorted(vals)
    t0 = ts[0]
    slope = 0
    if len(ts) > 1:
        t1 = ts[1]
        d = vals[t1] - vals[t0]
        if d % (t1 - t0):
            return None
        slope = d // (t1 - t0)
    base = vals[t0] - slope * t0
    if any(vals[t] != base + slope * t for t in ts):
        return None
    return Poly.const(base) + af.sym(_T) * slope
