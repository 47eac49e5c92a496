"""CUB's block- and warp-wide collectives (see :mod:`cuda2nki.frontend.cubblock`).

The front end lowers ``BlockReduce(tmp).Sum(v)`` and its kin to calls of the functions below;
each takes the participating thread count of the CUB type (``BLOCK_THREADS``, or the logical
warp size of a ``WarpReduce``) as its last argument.  Results are defined only where CUB
defines them; elsewhere a thread reads the poison value of the type (NaN, 0xDEADBEEF), as it
would read an unwritten shared-memory element, unless the run was asked not to poison:

- ``__c2n_cub_block_reduce_<op>(v, valid, threads)``: thread 0 of the block gets ``op`` over
  the values of the first ``valid`` threads (linear thread rank; each block its own ``valid``),
  combined in CUB's default order (a shuffle tree inside each warp of 32, then the warps'
  results in order).
- ``__c2n_cub_warp_reduce_<op>(v, valid, lanes)``: lane 0 of each logical warp of ``lanes``
  threads gets ``op`` over its first ``valid`` lanes.
- ``__c2n_cub_block_total_<op>(v, threads)``: every thread gets ``op`` over the whole block (the
  ``block_aggregate`` a scan returns to all).
- ``__c2n_cub_block_inclusive_<op>(v, threads)``: thread ``i`` gets ``op`` over threads ``0..i``.
- ``__c2n_cub_block_exclusive_<op>(v, init, threads)``: thread ``i`` gets ``init`` combined with
  ``op`` over threads ``0..i-1`` (thread 0: ``init``).
- ``__c2n_cub_block_exclusive0_<op>(v, threads)``: the same without an initial value: thread 0's
  output is undefined.

A barrier reached by part of the block is reported (C2N1504), as for ``__syncthreads``.  A block
whose size is not the CUB type's thread count is refused (C2N1507): CUB indexes its temporary
storage by the linear thread rank and assumes the block is exactly that size.
"""

from __future__ import annotations

import numpy as np

from cuda2nki.diagnostics import error
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.cubblock import PREFIX
from cuda2nki.simt.chunk import Chunk
from cuda2nki.simt.memory import Vec

_UFUNC = {"add": np.add, "max": np.fmax, "min": np.fmin}
_IDENTITY = {"add": 0, "max": -np.inf, "min": np.inf}
I32 = A.ScalarType(name="int32")


def _lanes(value, n: int) -> list[np.ndarray]:
    """A value of ``n`` active threads as one array per vector lane (one for a scalar)."""
    parts = value.lanes if isinstance(value, Vec) else (value,)
    return [np.broadcast_to(np.asarray(p), (n,)) for p in parts]


def _full(c: Chunk, act, x: np.ndarray, fill) -> np.ndarray:
    out = np.full(c.T, fill, dtype=x.dtype)
    out[np.arange(c.T) if act is None else act] = x
    return out


def _calc(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt.kind == "f" and dt.itemsize < 4 else dt


def _identity(op: str, dt: np.dtype):
    if op == "add" or dt.kind == "f":
        return dt.type(_IDENTITY[op])
    info = np.iinfo(dt)
    return dt.type(info.min if op == "max" else info.max)


def _poison(dt: np.dtype, poison: bool):
    from cuda2nki.simt.compiler import INT_POISON, POISON

    if not poison:
        return dt.type(0)
    if dt.kind == "f":
        return np.frombuffer(POISON["float32"], np.float32)[0].astype(dt)
    return np.frombuffer(INT_POISON * 2, np.uint8)[: dt.itemsize].copy().view(dt)[0]


def _check_size(c: Chunk, e: A.Call, threads: int, kind: str) -> None:
    if threads != c.tpb:
        raise error(
            "C2N1507",
            e.loc,
            kernel=c.launch.kernel,
            reason=f"a {kind} for {threads} threads in blocks of {c.tpb} threads",
        )


def _warp_tree(op: str, rows: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Lane 0's result of a shuffle-down tree over each row (``ok``: lanes that contribute)."""
    ident = _identity(op, rows.dtype)
    v = np.where(ok, rows, ident)
    width = rows.shape[1]
    off = 1
    while off < width:
        shifted = np.full_like(v, ident)
        shifted[:, :-off] = v[:, off:]
        v = _UFUNC[op](v, shifted).astype(rows.dtype)
        off *= 2
    return v[:, 0]


def _reduce(op: str, rows: np.ndarray, ok: np.ndarray, warp: int) -> np.ndarray:
    """Per row: a tree in each warp of ``warp`` lanes, then the warps' results in order."""
    nb, width = rows.shape
    nw = -(-width // warp)
    pad = nw * warp - width
    ident = _identity(op, rows.dtype)
    r = np.concatenate([rows, np.full((nb, pad), ident, rows.dtype)], 1) if pad else rows
    k = np.concatenate([ok, np.zeros((nb, pad), bool)], 1) if pad else ok
    per = _warp_tree(op, r.reshape(nb * nw, warp), k.reshape(nb * nw, warp)).reshape(nb, nw)
    acc = per[:, 0]
    for w in range(1, nw):
        acc = _UFUNC[op](acc, per[:, w]).astype(rows.dtype)
    return acc


def _scan(op: str, rows: np.ndarray) -> np.ndarray:
    """Inclusive scan along each row, in the row's type."""
    out = rows.copy()
    for j in range(1, rows.shape[1]):
        out[:, j] = _UFUNC[op](out[:, j - 1], rows[:, j])
    return out


def _lane_results(c: Chunk, act, value, compute, poison: bool | None) -> object:
    """Apply ``compute(full_values) -> (full_result, defined_mask)`` lane by lane; where the
    mask is False a thread reads poison (``poison`` True) or zero (False)."""
    n = c.count(act)
    outs = []
    for lane in _lanes(value, n):
        dt = lane.dtype
        calc = _calc(dt)
        full = _full(c, act, lane.astype(calc), _identity("add", calc))
        res, defined = compute(full)
        res = res.astype(dt)
        if defined is not None:
            res = np.where(defined, res, _poison(dt, bool(poison)))
        outs.append(res if act is None else res[act])
    return Vec(tuple(outs)) if isinstance(value, Vec) else outs[0]


def _block_rows(c: Chunk, act, full: np.ndarray):
    """Values as (blocks, threads), and which entries belong to active threads."""
    alive = np.zeros(c.T, bool)
    alive[np.arange(c.T) if act is None else act] = True
    return full.reshape(c.nb, c.tpb), alive.reshape(c.nb, c.tpb)


def _build(kind: str, op: str):
    def build(fc, e: A.Call):
        vf, vt = fc.expr(e.args[0])
        count = [fc.rvalue(a, I32) for a in e.args[1:]] if kind != "exclusive" else []
        tf = fc.rvalue(e.args[-1], I32)
        initf = fc.expr(e.args[1])[0] if kind == "exclusive" else None
        rt = vt if not getattr(vt, "const", False) else type(vt)(**{**vt.__dict__, "const": False})
        loc = e.loc
        poison = fc.prog.options.get("poison_shared", True)

        def f(c, a):
            from cuda2nki.simt.intrinsics import _check_sync

            threads = int(np.max(tf(c, a)))
            value = vf(c, a)
            if kind == "warp":
                valid = _thread_counts(c, a, count[0](c, a))
                return _warp(c, a, op, value, valid, threads, poison)
            _check_size(c, e, threads, "CUB block collective")
            _check_sync(c, a, loc)
            if kind == "reduce":
                valid = _thread_counts(c, a, count[0](c, a))
                return _lane_results(c, a, value, _block_reduce(c, a, op, valid), poison)
            if kind == "total":
                return _lane_results(c, a, value, _block_total(c, a, op), poison)
            init = None if kind == "inclusive" else "none"
            if initf is not None:
                init = initf(c, a)
            return _lane_results(c, a, value, _block_scan(c, a, op, init), poison)

        return f, rt

    return build


def _thread_counts(c: Chunk, act, counts) -> np.ndarray:
    """Each thread's own count of valid items (blocks and warps may pass different ones;
    inactive threads: 0)."""
    out = np.zeros(c.T, np.int64)
    out[np.arange(c.T) if act is None else act] = np.broadcast_to(
        np.asarray(counts), (c.count(act),)
    )
    return out


def _block_reduce(c: Chunk, act, op: str, valid: np.ndarray):
    def compute(full: np.ndarray):
        rows, alive = _block_rows(c, act, full)
        ok = alive & (c.linear_tid < valid).reshape(c.nb, c.tpb)
        res = np.repeat(_reduce(op, rows, ok, 32), c.tpb)
        defined = (c.linear_tid == 0) & (valid > 0)
        return res, defined

    return compute


def _block_total(c: Chunk, act, op: str):
    def compute(full: np.ndarray):
        rows, alive = _block_rows(c, act, full)
        return np.repeat(_reduce(op, rows, alive, 32), c.tpb), None

    return compute


def _block_scan(c: Chunk, act, op: str, init):
    """Inclusive (``init`` None), exclusive with an initial value, or exclusive without
    one (``init`` "none": thread 0 undefined)."""

    def compute(full: np.ndarray):
        rows, alive = _block_rows(c, act, full)
        ident = _identity(op, rows.dtype)
        rows = np.where(alive, rows, ident)
        inc = _scan(op, rows)
        if init is None:
            return inc.reshape(-1), None
        exc = np.concatenate([np.full((c.nb, 1), ident, rows.dtype), inc[:, :-1]], 1)
        if isinstance(init, str):
            return exc.reshape(-1), c.linear_tid != 0
        first = np.asarray(init).astype(rows.dtype)
        first = _full(c, act, np.broadcast_to(first, (c.count(act),)), ident)
        start = first.reshape(c.nb, c.tpb)[:, :1]
        out = _UFUNC[op](start, exc).astype(rows.dtype)
        out[:, 0] = start[:, 0]
        return out.reshape(-1), None

    return compute


def _warp(c: Chunk, act, op: str, value, valid: np.ndarray, lanes: int, poison: bool):
    """Lane 0 of each logical warp of ``lanes`` threads: ``op`` over its first ``valid``."""

    def compute(full: np.ndarray):
        tid = c.linear_tid
        alive = np.zeros(c.T, bool)
        alive[np.arange(c.T) if act is None else act] = True
        rows = full.reshape(-1, c.tpb)
        nlog = -(-c.tpb // lanes)
        pad = nlog * lanes - c.tpb
        ident = _identity(op, rows.dtype)
        r = np.concatenate([rows, np.full((c.nb, pad), ident, rows.dtype)], 1) if pad else rows
        ok = (alive & ((tid % lanes) < valid)).reshape(c.nb, c.tpb)
        k = np.concatenate([ok, np.zeros((c.nb, pad), bool)], 1) if pad else ok
        per = _warp_tree(op, r.reshape(-1, lanes), k.reshape(-1, lanes)).reshape(c.nb, nlog)
        res = per[:, :][np.arange(c.nb)[:, None], (np.arange(c.tpb) // lanes)[None, :]]
        return res.reshape(-1), (tid % lanes == 0) & (valid > 0)

    return _lane_results(c, act, value, compute, poison)


def register(reg) -> None:
    note = (
        "CUB {} collective: integers exact; floats reduced in CUB's default order (a tree in "
        "each warp, then the warps in order) and scanned in thread order, so other algorithms "
        "may round differently; results only where CUB defines them (else poison)"
    )
    for op in _UFUNC:
        for kind, fn in (
            ("reduce", "block_reduce_"),
            ("warp", "warp_reduce_"),
            ("total", "block_total_"),
            ("inclusive", "block_inclusive_"),
            ("exclusive", "block_exclusive_"),
            ("exclusive0", "block_exclusive0_"),
        ):
            what = {"reduce": "block reduce", "warp": "warp reduce", "total": "aggregate"}
            reg(PREFIX + fn + op, _build(kind, op), "partial", note.format(what.get(kind, "scan")))
