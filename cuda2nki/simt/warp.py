"""Warp-level operations: shuffles, votes and lane-group reductions over warps of 32 lanes.

Warps are 32 consecutive linear thread ids of a block; the last warp of a block whose size is not
a multiple of 32 is partial.  Only active threads contribute; a shuffle that names a lane that is
inactive or missing returns the caller's own value (and the interpreter warns: undefined on a GPU).
"""

from __future__ import annotations

import numpy as np

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.simt.chunk import Chunk
from cuda2nki.simt.memory import Vec

_BITS = (np.uint64(1) << np.arange(32, dtype=np.uint64)).astype(np.uint64)


def _full(c: Chunk, act, v, fill=0):
    """Scatter active values into a length-T array (inactive threads get ``fill``)."""
    if act is None:
        if isinstance(v, np.ndarray):
            return v
        return np.full(c.T, v, dtype=np.asarray(v).dtype)
    dt = np.asarray(v).dtype
    out = np.full(c.T, fill, dtype=dt)
    out[act] = v
    return out


def _active_mask(c: Chunk, act) -> np.ndarray:
    if act is None:
        return np.ones(c.T, bool)
    m = np.zeros(c.T, bool)
    m[act] = True
    return m


def _at(x, act):
    return x if act is None else x[act]


def shuffle(c: Chunk, act, kind: str, value, arg, width, loc: SourceLoc, func: str):
    """``__shfl{,_up,_down,_xor}_sync``: ``kind`` in idx/up/down/xor."""
    if isinstance(value, Vec):
        return Vec(tuple(shuffle(c, act, kind, v, arg, width, loc, func) for v in value.lanes))
    n = c.count(act)
    lane = _at(c.lane, act)
    w = np.asarray(width).astype(np.int64)
    if np.any((w <= 0) | (w > 32) | (w & (w - 1)) != 0):
        w = np.where((w <= 0) | (w > 32) | ((w & (w - 1)) != 0), 32, w)
    a = np.asarray(arg).astype(np.int64)
    seg0 = lane - (lane % w)  # first lane of the thread's width-segment
    if kind == "idx":
        src = seg0 + (a % w)
        ok = np.ones(n, bool)
    elif kind == "up":
        src = lane - a
        ok = src >= seg0
    elif kind == "down":
        src = lane + a
        ok = src < seg0 + w
    else:  # xor
        src = lane ^ a
        ok = src < seg0 + w
    src = np.broadcast_to(src, (n,))
    ok = np.broadcast_to(ok, (n,))
    k = np.arange(c.T, dtype=np.int64) if act is None else act
    src_k = k - lane + np.where(ok, src, lane)
    # a source lane must exist (partial warps) and be active
    lin = _at(c.linear_tid, act) - lane + np.where(ok, src, lane)
    exists = lin < c.tpb
    src_k = np.where(exists, src_k, k)
    active = _active_mask(c, act)
    good = active[src_k]
    if not np.all(good & exists):
        j = int(np.flatnonzero(~(good & exists))[0])
        bad_src = int(np.where(ok, src, lane)[j]) if np.ndim(src) else int(src)
        c.launch.warn(
            "C2N1512",
            loc,
            func=func,
            kernel=c.launch.kernel,
            src=bad_src,
            **c.where(c.thread_of(act, j)),
        )
        src_k = np.where(good & exists, src_k, k)
    full = _full(c, act, value)
    return full[src_k]


def ballot_bits(c: Chunk, act, pred) -> np.ndarray:
    """Per-warp ``uint32`` ballot of ``pred`` over the active lanes (indexed by chunk warp)."""
    p = _full(
        c, act, np.asarray(pred) != 0 if not isinstance(pred, bool) else np.bool_(pred), False
    )
    if p.dtype != np.bool_:
        p = p.astype(bool)
    if c.tpb % 32 == 0:
        bits = (p.reshape(-1, 32).astype(np.uint64) * _BITS).sum(axis=1)
        return bits.astype(np.uint32)
    vals = np.where(p, (np.uint64(1) << c.lane.astype(np.uint64)), np.uint64(0)).astype(np.float64)
    return np.bincount(c.warp, weights=vals, minlength=c.nwarps).astype(np.uint64).astype(np.uint32)


def ballot(c: Chunk, act, mask, pred):
    bits = ballot_bits(c, act, pred)
    return (_at(bits[c.warp], act) & np.asarray(mask).astype(np.uint32)).astype(np.uint32)


def active_bits(c: Chunk, act):
    return _at(ballot_bits(c, act, True)[c.warp], act)


def vote(c: Chunk, act, kind: str, mask, pred):
    m = np.asarray(mask).astype(np.uint32)
    if kind == "any":
        return (ballot(c, act, m, pred) != 0).astype(np.int32)
    on = ballot_bits(c, act, pred)[c.warp]
    alive = ballot_bits(c, act, True)[c.warp]
    miss = _at(alive & ~on, act) & m
    return (miss == 0).astype(np.int32)


_IDENT = {
    "add": lambda dt: 0,
    "max": lambda dt: -np.inf if dt.kind == "f" else np.iinfo(dt).min,
    "min": lambda dt: np.inf if dt.kind == "f" else np.iinfo(dt).max,
    "and": lambda dt: -1 if dt.kind == "i" else np.iinfo(dt).max,
    "or": lambda dt: 0,
    "xor": lambda dt: 0,
}


def _combine(op: str, a, b, dt):
    if op == "add":
        return np.add(a, b, dtype=dt)
    if op == "max":
        return np.maximum(a, b) if dt.kind != "f" else np.fmax(a, b)
    if op == "min":
        return np.minimum(a, b) if dt.kind != "f" else np.fmin(a, b)
    if op == "and":
        return np.bitwise_and(a, b)
    if op == "or":
        return np.bitwise_or(a, b)
    return np.bitwise_xor(a, b)


def group_reduce(c: Chunk, act, op: str, value, group: int):
    """Each lane gets ``op`` over the active lanes of its aligned group of ``group`` lanes
    (``group`` > 32: of that many consecutive linear thread ids of its block).

    The combination order is the butterfly (xor-shuffle) tree a warp reduction uses, so float sums
    round as they do on the device.
    """
    v = np.asarray(value)
    dt = v.dtype
    calc = np.dtype(np.float32) if dt.kind == "f" and dt.itemsize < 4 else dt
    g = int(group) if 1 <= int(group) <= 1024 and (int(group) & (int(group) - 1)) == 0 else 32
    ident = calc.type(_IDENT[op](calc))
    if g <= 32:
        wpb = (c.tpb + 31) // 32
        ngroups = c.nb * wpb * (32 // g)
        lane = _at(c.lane, act)
        gid = _at(c.warp, act) * (32 // g) + lane // g
    else:  # a tile of several warps: g consecutive linear thread ids of a block
        per_block = (c.tpb + g - 1) // g
        ngroups = c.nb * per_block
        lane = _at(c.linear_tid, act)
        gid = _at(c.blk, act) * per_block + lane // g
    m = np.full((ngroups, g), ident, dtype=calc)
    m[gid, lane % g] = v.astype(calc) if isinstance(value, np.ndarray) else calc.type(value)
    s = g // 2
    cols = np.arange(g)
    while s >= 1:
        m = _combine(op, m, m[:, cols ^ s], calc)
        s //= 2
    out = m[gid, lane % g]
    return out.astype(dt) if calc != dt else out
