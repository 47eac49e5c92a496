"""Reductions and scans of the intent-layer evaluator (:mod:`cuda2nki.ir.evaluate`): evaluated once
per value of the frame variables they read, in chunks where large, with their error bounds."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cuda2nki.diagnostics import error
from cuda2nki.ir import extremum as argext
from cuda2nki.ir import nodes as n
from cuda2nki.ir import numerics as num
from cuda2nki.ir import overflow
from cuda2nki.ir.evalbounds import gamma
from cuda2nki.ir.evalvalues import (
    Val,
    _bcast_lead,
    _Frame,
    _free_vars,
    _merge,
    _or,
    _pad,
    _reduce_oob,
    _shift,
    _squeeze,
    _var_key,
)
from cuda2nki.ir.ops import Op, is_float, is_int
from cuda2nki.ir.types import (
    binary_dtype,
    dtype_of,
    np_dtype,
    tiny,
    unit_roundoff,
)


class Reductions:
    """Reduction and scan evaluation of :class:`cuda2nki.ir.evaluate._Evaluator` (a mixin)."""

    def x_Reduce(self, e: n.Reduce, frame: _Frame) -> Val:
        """The reduction, evaluated once per value of the frame variables it reads."""
        free = self._free(e)
        if free is None:
            return self._reduce(e, frame, None)
        names = sorted(free & frame.vars.keys())
        key = (frame.rank, tuple(_var_key(frame, nm) for nm in names))
        kept = self.reduced.get(id(e))
        if kept is not None and kept[0] == key:
            got = kept[1]
        else:  # one value per node: a chunked enclosing variable moves on, never back
            got = self._reduce(e, frame, names)
            self.reduced[id(e)] = (key, got)
        return dataclasses.replace(got)  # callers may rebind a field of the Val they receive

    def _free(self, e: n.Reduce) -> frozenset[str] | None:
        got = self.reads.get(id(e))
        if got is None:
            got = self.reads[id(e)] = (e, _free_vars(e))
        return got[1]

    def _reduce(self, e: n.Reduce, frame: _Frame, names: list[str] | None) -> Val:
        axes, limits = [], []
        for a in e.axes:
            ext = self.size(a.extent, frame, a.loc)
            if isinstance(ext, Val):
                raise error("C2N2410", a.loc, axis=a.name)
            if np.ndim(ext):  # extent depends on outer axes (triangular): mask the excess
                limits.append((a.name, np.asarray(ext)))
                ext = int(np.max(ext)) if np.size(ext) else 0
            axes.append((a.name, max(int(ext), 0)))
        m = len(axes)
        inner = frame.extend(axes)
        body_t = dtype_of(e.body, self.types)
        acc = e.acc_dtype or body_t
        total = int(np.prod([ext for _, ext in axes])) if axes else 1
        if names is None:
            outer_shape = tuple(frame.extents.get(-(frame.rank - j), 1) for j in range(frame.rank))
        else:  # the body's values span only the frame variables the reduction reads
            outer_shape = tuple(frame.extents[frame.dims[nm]] for nm in names)
        if not limits and self._einsum_ok(e, body_t, acc):
            res = self._reduce_einsum(e, inner, m, total, acc)
        else:
            res = self._reduce_chunked(e, frame, axes, acc, outer_shape, limits)
        res.k = total * max(res.k, 1) if total else res.k
        res.acc = acc if is_float(acc) else res.acc
        if res.top2 is not None:
            res.gap = argext.gap(res.top2)
        return res

    def _einsum_ok(self, e: n.Reduce, body_t: str, acc: str) -> bool:
        if e.op is not Op.ADD or e.where is not None:
            return False
        if not (isinstance(e.body, n.Binary) and e.body.op is Op.MUL):
            return False
        if is_int(acc) and is_int(body_t):
            # integer sums wrap modulo 2**bits in any order: a contraction in the accumulator's
            # type gives the lockstep loop's result exactly
            return np_dtype(body_t) == np_dtype(acc) and np_dtype(acc).itemsize >= 4
        if not (is_float(acc) and is_float(body_t)):
            return False
        return not self.declared or (
            np_dtype(body_t) == np_dtype(acc) and np_dtype(acc).itemsize >= 4
        )

    def _reduce_einsum(self, e: n.Reduce, inner: _Frame, m: int, total: int, acc: str) -> Val:
        body = e.body
        assert isinstance(body, n.Binary)
        a, b = self.expr(body.a, inner), self.expr(body.b, inner)
        prod_t = binary_dtype(Op.MUL, a.dtype, b.dtype)
        t = self.cdt(acc)
        rank = inner.rank
        letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[:rank]
        ea = np.asarray(a.v)
        eb = np.asarray(b.v)
        exts = [inner.extents[-(rank - d)] for d in range(rank)]

        def contract(x: Any, y: Any, dtype: np.dtype) -> Any:
            if (np.ndim(x) == 0 and x == 0) or (np.ndim(y) == 0 and y == 0):
                return np.zeros((1,) * (rank - m), dtype)
            sx, lx = _squeeze(_pad(np.asarray(x, dtype=dtype), rank), letters, exts)
            sy, ly = _squeeze(_pad(np.asarray(y, dtype=dtype), rank), letters, exts)
            outl = "".join(c for c in letters[m:] if c in lx or c in ly)
            r = np.einsum(f"{lx},{ly}->{outl}", sx, sy, optimize=True)
            factor = 1.0
            for d in range(m):
                if letters[d] not in lx and letters[d] not in ly:
                    factor *= exts[d]
            shape = [exts[d] if letters[d] in outl else 1 for d in range(m, rank)]
            r = np.asarray(r).reshape(shape)
            return r * dtype.type(factor) if factor != 1.0 else r

        v = contract(ea, eb, t)
        oob = _reduce_oob(_or(a.oob, b.oob), m, rank, None)
        k = max(a.k, b.k)
        out = Val(v, acc, oob=oob, k=k, acc=a.acc or b.acc)
        if self.analysis:
            f64 = np.dtype(np.float64)
            absa, absb = np.abs(ea.astype(f64, copy=False)), np.abs(eb.astype(f64, copy=False))
            s_abs = contract(absa, absb, f64)
            s_e = contract(absa, b.e, f64) + contract(a.e, absb, f64) + contract(a.e, b.e, f64)
            s_e = s_e + (unit_roundoff(prod_t)) * s_abs
            uacc = self.uacc(acc)
            out.e = s_e + gamma(total, uacc) * s_abs + uacc * tiny(acc) * total
            out.e = overflow.guard(overflow.guard(out.e, s_abs, acc), s_abs, prod_t)
            out.m = contract(a.m, b.m, f64)
        return out

    def _reduce_chunked(self, e, frame: _Frame, axes, acc: str, outer_shape, limits) -> Val:
        m = len(axes)
        first_name, first_ext = axes[0]
        rest = int(np.prod([ext for _, ext in axes[1:]])) * max(int(np.prod(outer_shape)), 1)
        step = self._chunk_step(rest)
        parts: list[tuple[Val, tuple]] = []
        inner = frame.extend(axes)
        for lo in range(0, max(first_ext, 1), step):
            hi = min(first_ext, lo + step)
            shape = [1] * inner.rank
            shape[0] = hi - lo
            f = inner.with_var(first_name, np.arange(lo, hi, dtype=np.int64).reshape(shape))
            parts.append(self._reduce_block(e, f, m, acc, limits))
            if first_ext == 0:
                break
        res, sums = parts[0]
        for p, psums in parts[1:]:
            two = res.top2
            res = self._combine(e.op, res, p, acc)
            sums = tuple(_merge(e.op, a, b) for a, b in zip(sums, psums))
            if two is not None and p.top2 is not None:
                res.top2 = argext.merge_top_two(e.op, two, p.top2)
        if self.analysis:
            total = int(np.prod([ext for _, ext in axes])) if axes else 1
            res.e = self._reduce_error(e.op, sums, total, acc)
            res.e = overflow.guard_reduction(e.op, res.e, sums, acc)
        return res

    def _reduce_block(self, e: n.Reduce, f: _Frame, m: int, acc: str, limits) -> tuple[Val, tuple]:
        body = self.expr(e.body, f)
        rank = f.rank
        full = tuple(f.extents[-(rank - j)] for j in range(m))
        t = self.cdt(acc)
        mask = None
        for name, lim in limits:
            inside = _bcast_lead(f.vars[name] < _pad(lim, rank), full, rank)
            mask = inside if mask is None else mask & inside
        if e.where is not None:
            w = self.expr(e.where, f)
            wm = _bcast_lead(np.asarray(w.v).astype(bool, copy=False), full, rank)
            mask = wm if mask is None else mask & wm
            if self.analysis and np.any(np.asarray(w.e) > 0):
                body.e = np.where(np.asarray(w.e) > 0, np.inf, body.e)
        ufunc = num.COMBINE.get(e.op)
        if ufunc is None:
            raise error("C2N2408", e.loc, op=str(e.op))
        x = _bcast_lead(np.asarray(body.v).astype(t, copy=False), full, rank)
        ident = num.identity(e.op, t)
        if mask is not None:
            x = np.where(mask, x, ident)
        v = ufunc.reduce(x, axis=tuple(range(m)), dtype=t, initial=ident)
        out = Val(
            np.asarray(v), acc, oob=_reduce_oob(body.oob, m, rank, mask), k=body.k, acc=body.acc
        )
        sums: tuple = ()
        if self.analysis:
            sums, out.m = self._reduce_sums(e.op, body, full, rank, mask)
            if id(e) in self.ranked and is_float(acc):
                out.top2 = argext.top_two(e.op, x, m)
        return out, sums

    def _reduce_sums(self, op, body: Val, full, rank, mask) -> tuple[tuple, Any]:
        """Order-independent ingredients of a reduction's bound, mergeable across chunks."""
        axes = tuple(range(len(full)))
        e = _bcast_lead(np.asarray(body.e, np.float64), full, rank)
        mg = _bcast_lead(np.asarray(body.m, np.float64), full, rank)
        av = np.abs(_bcast_lead(np.asarray(body.v, np.float64), full, rank))
        if mask is not None:
            e, mg, av = (np.where(mask, x, 0.0) for x in (e, mg, av))
        if op is Op.ADD:
            return (e.sum(axis=axes), av.sum(axis=axes)), mg.sum(axis=axes)
        if op is Op.MUL:
            if mask is not None:  # masked terms contribute the identity 1 exactly
                av = np.where(mask, av, 1.0)
                mg = np.where(mask, mg, 1.0)
            return (np.prod(av + e, axis=axes), np.prod(av, axis=axes)), np.prod(mg, axis=axes)
        if op in (Op.MAX, Op.MIN):
            return (e.max(axis=axes, initial=0.0),), mg.max(axis=axes, initial=0.0)
        inexact = np.any(e > 0, axis=axes)
        return (np.where(inexact, np.inf, 0.0),), mg.max(axis=axes, initial=0.0)

    def _combine(self, op: Op, x: Val, y: Val, acc: str) -> Val:
        """Join two partial reductions (values and magnitudes; the bound is rebuilt by the caller)."""
        t = self.cdt(acc)
        v = num.COMBINE[op](
            np.asarray(x.v).astype(t, copy=False), np.asarray(y.v).astype(t, copy=False)
        ).astype(t, copy=False)
        out = Val(v, acc, oob=_or(x.oob, y.oob), k=max(x.k, y.k), acc=x.acc or y.acc)
        if self.analysis:
            if op is Op.ADD:
                out.m = x.m + y.m
            elif op is Op.MUL:
                out.m = x.m * y.m
            else:
                out.m = np.maximum(x.m, y.m)
        return out

    def x_Scan(self, e: n.Scan, frame: _Frame) -> Val:
        if e.axis not in frame.dims:
            raise error("C2N2409", e.loc, axis=e.axis)
        body = self.expr(e.body, frame)
        acc = e.acc_dtype or body.dtype
        t = self.cdt(acc)
        rank = frame.rank
        full = tuple(frame.extents[-(rank - j)] for j in range(rank))
        dim = rank + frame.dims[e.axis]
        ufunc = num.COMBINE.get(e.op)
        if ufunc is None:
            raise error("C2N2408", e.loc, op=str(e.op))
        x = np.broadcast_to(np.asarray(body.v).astype(t, copy=False), full)
        v = ufunc.accumulate(x, axis=dim, dtype=t) if x.size else x.copy()
        ident = num.identity(e.op, t)
        if e.exclusive:
            v = _shift(v, dim, ident)
        ext = full[dim]
        oob = body.oob  # a bad read feeds every later position of the scan
        if oob is not None:
            oob = np.logical_or.accumulate(np.broadcast_to(oob, full), axis=dim)
            if e.exclusive:
                oob = _shift(oob, dim, False)
        out = Val(v, acc, oob=oob, k=max(body.k, 1) * ext, acc=acc if is_float(acc) else body.acc)
        if self.analysis:
            out.e, out.m = self._scan_bound(e, body, full, dim, acc)
        return out
