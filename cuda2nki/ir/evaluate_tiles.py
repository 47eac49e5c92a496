"""A direct NumPy execution of the scheduled-tile layer (no code generation, no NKI simulator).

``evaluate_tiles(kernel, inputs, scalars)`` runs loops in Python and every tile instruction as
one NumPy operation, with NKI's numerics: engines compute in float32 and round to the
destination's dtype, matmul accumulates in float32 PSUM, DMA converts dtypes.  Fresh tiles are
filled with NaN (integers with a sentinel) so a read of unwritten tile memory shows up in the
result.  A load of an ``inout`` tensor reads its kernel-entry value, as in the generated port
(which stores an ``inout`` to a separate output) and the intent evaluator.  A write whose source has fewer elements than its destination broadcasts NumPy-style (a
row loaded into every partition).  It lets a pass be checked against :func:`cuda2nki.ir.evaluate.evaluate` on its own
output; the NKI simulator remains the judge of generated code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cuda2nki.diagnostics import UNKNOWN_LOC, SourceLoc, error
from cuda2nki.ir import nodes as n
from cuda2nki.ir import numerics as num
from cuda2nki.ir import uniform
from cuda2nki.ir.evaluate import infer_scalars
from cuda2nki.ir.ops import Op, Role, is_float
from cuda2nki.ir.types import np_dtype

_F32 = np.dtype(np.float32)


def evaluate_tiles(
    kernel: n.Kernel, inputs: Mapping[str, np.ndarray], scalars: Mapping[str, Any] | None = None
) -> dict[str, np.ndarray]:
    """Outputs (role out/inout) of a scheduled kernel."""
    ev = _TileEvaluator(kernel, inputs, scalars or {})
    with np.errstate(all="ignore"):
        ev.block(kernel.body, {})
    return {t.name: ev.hbm[t.name] for t in kernel.outputs}


class _TileEvaluator:
    def __init__(self, k: n.Kernel, inputs: Mapping[str, np.ndarray], scalars: Mapping[str, Any]):
        self.k = k
        self.scalars = infer_scalars(k, inputs, scalars)
        self.hbm: dict[str, np.ndarray] = {}
        #: kernel-entry values of inout tensors: what loads see (the port stores to an output copy)
        self.entry: dict[str, np.ndarray] = {}
        self.dtypes: dict[str, str] = {}
        for t in k.params:
            if not isinstance(t, n.TensorDecl):
                continue
            shape = tuple(int(s.evaluate(self.scalars)) for s in t.shape)
            if t.name in inputs:
                arr = np.asarray(inputs[t.name]).astype(np_dtype(t.dtype))
                if arr.shape != shape:
                    raise error(
                        "C2N2402", t.loc, name=t.name, expected=list(shape), got=list(arr.shape)
                    )
            elif t.role in (Role.IN, Role.INOUT):
                raise error("C2N2401", t.loc, what=f"input tensor '{t.name}'")
            else:
                arr = np.zeros(shape, np_dtype(t.dtype))
            self.hbm[t.name] = arr
            if t.role is Role.INOUT:
                self.entry[t.name] = arr.copy()
            self.dtypes[t.name] = t.dtype
        self.tiles: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ statements
    def block(self, stmts: tuple, env: dict[str, int]) -> None:
        for s in stmts:
            self.stmt(s, env)

    def stmt(self, s: Any, env: dict[str, int]) -> None:
        meth = getattr(self, "s_" + type(s).__name__, None)
        if meth is None:
            raise error(
                "C2N2449", getattr(s, "loc", UNKNOWN_LOC), reason=f"cannot run {type(s).__name__}"
            )
        meth(s, env)

    def s_Loop(self, s: n.Loop, env: dict[str, int]) -> None:
        if s.cond is not None and not uniform.evaluate(s.cond, self.scalars):
            return
        start, stop = self.size(s.start, env, s.loc), self.size(s.stop, env, s.loc)
        for i in range(start, stop, s.step or 1):
            self.block(s.body, {**env, s.var: i})

    def s_Alloc(self, s: n.Alloc, env: dict[str, int]) -> None:
        shape = tuple(self.size(x, env, s.loc) for x in s.shape)
        dt = np_dtype(s.dtype)
        fill = np.nan if is_float(s.dtype) else (np.iinfo(dt).min if dt.kind in "iu" else 0)
        self.tiles[s.name] = np.full(shape, fill, dt)
        self.dtypes[s.name] = s.dtype

    def s_Load(self, s: n.Load, env) -> None:
        if s.src.tensor in self.entry:
            arr, idx = self.locate(s.src, env, s.loc, self.entry)
            self.put(s.dst, np.asarray(arr[idx]), env, s.loc)
            return
        self.put(s.dst, self.get(s.src, env, s.loc), env, s.loc)

    def s_Store(self, s: n.Store, env) -> None:
        v = self.get(s.src, env, s.loc)
        if s.accumulate is None:
            self.put(s.dst, v, env, s.loc)
            return
        arr, idx = self.locate(s.dst, env, s.loc)
        shape = np.shape(arr[idx])
        v = v.reshape(shape).astype(arr.dtype)
        if any(isinstance(i, np.ndarray) for i in idx):  # scatter: repeated rows combine
            num.COMBINE[s.accumulate].at(arr, idx, v)
        else:
            arr[idx] = num.COMBINE[s.accumulate](arr[idx], v)

    def s_Matmul(self, s: n.Matmul, env) -> None:
        st = self.get(s.stationary, env, s.loc).astype(_F32)
        mv = self.get(s.moving, env, s.loc).astype(_F32)
        st2 = st.reshape(st.shape[0], -1)
        mv2 = mv.reshape(mv.shape[0], -1)
        r = st2.T @ mv2
        if s.accumulate:
            r = self.get(s.dst, env, s.loc).astype(_F32).reshape(r.shape) + r
        self.put(s.dst, r, env, s.loc)

    def s_Activation(self, s: n.Activation, env) -> None:
        x = self.get(s.src, env, s.loc).astype(_F32)
        if s.scale is not None:
            x = x * self.operand(s.scale, env, x.shape, s.loc)
        if s.bias is not None:
            x = x + self.operand(s.bias, env, x.shape, s.loc)
        r = num.UNARY[s.op](x)
        self.put(s.dst, r, env, s.loc)
        if s.reduce_dst is not None:
            sums = r.reshape(r.shape[0], -1).sum(axis=1, dtype=_F32).reshape(-1, 1)
            self.put(s.reduce_dst, sums, env, s.loc)

    def s_TensorTensor(self, s: n.TensorTensor, env) -> None:
        if s.op.info.kind == "bitwise":
            a, b = self.get(s.a, env, s.loc), self.get(s.b, env, s.loc)
            self.put(
                s.dst, _bits(s.op, a, b.reshape(a.shape) if b.size == a.size else b), env, s.loc
            )
            return
        a = self.get(s.a, env, s.loc).astype(_F32)
        b = self.get(s.b, env, s.loc).astype(_F32)
        if b.size == a.size and b.shape != a.shape:
            b = b.reshape(a.shape)
        self.put(s.dst, num.BINARY[s.op](a, b), env, s.loc)

    def s_TensorScalar(self, s: n.TensorScalar, env) -> None:
        if s.op0.info.kind == "bitwise" and s.op1 is None:
            x = self.get(s.src, env, s.loc)
            y = self.int_operand(s.operand0, env, x.shape, s.loc)
            self.put(s.dst, _bits(s.op0, y, x) if s.reverse0 else _bits(s.op0, x, y), env, s.loc)
            return
        x = self.get(s.src, env, s.loc).astype(_F32)
        x = self._scalar_op(s.op0, x, self.operand(s.operand0, env, x.shape, s.loc), s.reverse0)
        if s.op1 is not None and s.operand1 is not None:
            x = self._scalar_op(s.op1, x, self.operand(s.operand1, env, x.shape, s.loc), s.reverse1)
        self.put(s.dst, x, env, s.loc)

    @staticmethod
    def _scalar_op(op: Op, x: np.ndarray, y: np.ndarray, reverse: bool) -> np.ndarray:
        if op.arity == 1:
            return num.UNARY[op](x)
        return num.BINARY[op](y, x) if reverse else num.BINARY[op](x, y)

    def s_TensorReduce(self, s: n.TensorReduce, env) -> None:
        x = self.get(s.src, env, s.loc).astype(_F32)
        r = num.COMBINE[s.op].reduce(x, axis=tuple(s.axes), keepdims=True)
        self.put(s.dst, -r if s.negate else r, env, s.loc)

    def s_TensorTranspose(self, s: n.TensorTranspose, env) -> None:
        x = self.get(s.src, env, s.loc)
        self.put(s.dst, x.reshape(x.shape[0], -1).T, env, s.loc)

    def s_TensorSelect(self, s: n.TensorSelect, env) -> None:
        p = self.get(s.pred, env, s.loc)
        arr, _ = self.locate(s.dst, env, s.loc)
        get = self.int_operand if arr.dtype.kind in "iu" else self.operand  # copies, exact
        t = get(s.on_true, env, p.shape, s.loc)
        f = get(s.on_false, env, p.shape, s.loc)
        self.put(s.dst, np.where(p != 0, t, f), env, s.loc)

    def s_TensorCopy(self, s: n.TensorCopy, env) -> None:
        self.put(s.dst, self.get(s.src, env, s.loc), env, s.loc)

    def s_TensorBitcast(self, s: n.TensorBitcast, env) -> None:
        arr, _ = self.locate(s.dst, env, s.loc)
        src = self.get(s.src, env, s.loc)
        self.put(s.dst, np.ascontiguousarray(src).view(arr.dtype), env, s.loc)

    def s_TensorGather(self, s: n.TensorGather, env) -> None:
        data = self.get(s.data, env, s.loc)
        rows = data.reshape(data.shape[0], -1)
        idx = np.asarray(self.get(s.indices, env, s.loc), np.int64)
        picked = np.take_along_axis(rows, idx.reshape(idx.shape[0], -1), axis=1)
        self.put(s.dst, picked.reshape(idx.shape), env, s.loc)

    def s_TensorScan(self, s: n.TensorScan, env) -> None:
        x = self.get(s.src, env, s.loc).astype(_F32)
        flat = x.reshape(x.shape[0], -1)
        init = np.broadcast_to(
            self.operand(s.initial, env, (x.shape[0], 1), s.loc), (x.shape[0], 1)
        )
        r = num.COMBINE[s.op].accumulate(np.concatenate([init.astype(_F32), flat], axis=1), axis=1)
        self.put(s.dst, r[:, 1:].reshape(x.shape), env, s.loc)

    def s_BnStats(self, s: n.BnStats, env) -> None:
        x = self.get(s.src, env, s.loc).astype(_F32)
        x = x.reshape(x.shape[0], -1)
        out = np.zeros((x.shape[0], 6), _F32)
        for k, part in enumerate((x[:, 0::2], x[:, 1::2])):
            if part.shape[1]:
                m = part.mean(axis=1, dtype=_F32)
                out[:, 3 * k + 1] = m
                out[:, 3 * k + 2] = ((part - m[:, None]) ** 2).sum(axis=1, dtype=_F32)
            out[:, 3 * k] = part.shape[1]
        self.put(s.dst, out, env, s.loc)

    def s_BnAggr(self, s: n.BnAggr, env) -> None:
        x = self.get(s.src, env, s.loc).astype(np.float64)
        tr = x.reshape(x.shape[0], -1, 3)
        cnt, mean, m2 = tr[..., 0], tr[..., 1], tr[..., 2]
        tot = cnt.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            gm = (cnt * mean).sum(axis=1) / tot
            var = (m2 + cnt * (mean - gm[:, None]) ** 2).sum(axis=1) / tot
        self.put(s.dst, np.stack([gm, var], axis=1).astype(_F32), env, s.loc)

    def s_IntArith(self, s: n.IntArith, env) -> None:
        a = self.int_operand(s.a, env, (), s.loc)
        b = self.int_operand(s.b, env, (), s.loc)
        self.put(s.dst, num.c_int32(s.op, a, b, s.unsigned), env, s.loc)

    def s_Memset(self, s: n.Memset, env) -> None:
        arr, idx = self.locate(s.dst, env, s.loc)
        arr[idx] = s.value.value

    def s_Iota(self, s: n.Iota, env) -> None:
        arr, idx = self.locate(s.dst, env, s.loc)
        shape = np.shape(arr[idx])
        p = np.arange(shape[0]).reshape(-1, 1)
        free = np.zeros((1, 1), np.int64)
        for step, count in s.pattern:
            if not isinstance(count, int):  # a problem size (a whole row)
                count = self.size(count, env, s.loc)
            free = (free[..., None] + step * np.arange(count)).reshape(1, -1)
        vals = s.offset + p * s.channel_multiplier + free
        arr[idx] = vals.reshape(shape).astype(arr.dtype)

    def s_Note(self, s: n.Note, env) -> None:
        return

    def s_Compute(self, s: n.Compute, env) -> None:
        raise error("C2N2449", s.loc, reason="an intent Compute inside a scheduled kernel")

    # ------------------------------------------------------------------ views
    def size(self, e: n.SizeExpr, env: Mapping[str, int], loc: SourceLoc) -> int:
        try:
            return int(e.evaluate({**self.scalars, **env}))
        except KeyError as exc:
            raise error("C2N2411", loc, name=str(exc.args[0])) from None

    def locate(
        self, v: n.View, env, loc: SourceLoc, hbm: Mapping[str, np.ndarray] | None = None
    ) -> tuple[np.ndarray, Any]:
        arr = self.tiles.get(v.tensor)
        if arr is None:
            arr = (self.hbm if hbm is None else hbm).get(v.tensor)
        if arr is None:
            raise error("C2N2405", loc, name=v.tensor)
        if not v.dims:
            return arr, (...,)
        if len(v.dims) == 1 and isinstance(v.dims[0], n.Rows):  # rows of the flat elements
            flat = arr.reshape(-1)  # a view: the tensors are contiguous
            return flat, (self.rows(v.dims[0], v.tensor, flat.shape[0], env, loc),)
        if len(v.dims) != arr.ndim:
            raise error("C2N2406", loc, name=v.tensor, rank=arr.ndim, got=len(v.dims))
        idx: list[Any] = []
        for d, ext in zip(v.dims, arr.shape):
            if isinstance(d, n.Slice):
                start, size = self.size(d.start, env, loc), self.size(d.size, env, loc)
                last = start + (size - 1) * d.step
                if size > 0 and (start < 0 or last < 0 or start >= ext or last >= ext):
                    raise error("C2N2438", loc, name=v.tensor, first=start, last=last, ext=ext)
                stop = start + size * d.step
                idx.append(slice(start, stop if stop >= 0 else None, d.step))
            elif isinstance(d, n.At):
                i = self.size(d.index, env, loc)
                if not 0 <= i < ext:
                    raise error("C2N2438", loc, name=v.tensor, first=i, last=i, ext=ext)
                idx.append(i)
            else:
                rows = self.get(d.index, env, loc).reshape(-1).astype(np.int64)
                if rows.size and (rows.min() < 0 or rows.max() >= ext):
                    raise error("C2N2403", loc, what=f"the indirect access to '{v.tensor}'")
                idx.append(rows)
        return arr, _outer(tuple(idx))

    def rows(self, d: n.Rows, name: str, ext: int, env, loc: SourceLoc) -> np.ndarray:
        """The flat element index of each element of overlapping rows, ``[count, width]``."""
        start, count = self.size(d.start, env, loc), self.size(d.count, env, loc)
        stride, width = self.size(d.stride, env, loc), self.size(d.width, env, loc)
        idx = start + np.arange(count)[:, None] * stride + np.arange(width)[None, :]
        if idx.size and (idx.min() < 0 or idx.max() >= ext):
            raise error(
                "C2N2438", loc, name=name, first=int(idx.min()), last=int(idx.max()), ext=ext
            )
        return idx

    def get(self, v: n.View, env, loc: SourceLoc) -> np.ndarray:
        arr, idx = self.locate(v, env, loc)
        return np.asarray(arr[idx])

    def put(self, v: n.View, value: np.ndarray, env, loc: SourceLoc) -> None:
        arr, idx = self.locate(v, env, loc)
        shape = np.shape(arr[idx])
        value = np.asarray(value)
        if value.size == int(np.prod(shape)):
            value = value.reshape(shape)
        else:  # a source with fewer elements broadcasts (e.g. one row over all partitions)
            try:
                value = np.broadcast_to(value, shape)
            except ValueError:
                raise error(
                    "C2N2449", loc, reason=f"writing {value.shape} into a view of shape {shape}"
                ) from None
        arr[idx] = value.astype(arr.dtype)

    def int_operand(self, o: Any, env, shape: tuple, loc: SourceLoc) -> np.ndarray:
        """An operand's integer values, exactly (a view as stored, a scalar as given)."""
        if isinstance(o, n.View):
            x = self.get(o, env, loc)
            x = np.rint(x) if x.dtype.kind == "f" else x
            x = x.astype(np.int64)
            if shape and x.ndim != len(shape):
                return x.reshape(x.shape[0], *([1] * (len(shape) - 1)))
            return x
        if isinstance(o, n.Lit):
            return np.asarray(int(o.value), np.int64)
        if isinstance(o, n.Param):
            value = self.scalars.get(o.name, env.get(o.name))
            if value is None:
                raise error("C2N2401", loc, what=f"scalar '{o.name}'")
            return np.asarray(int(value), np.int64)
        raise error("C2N2449", loc, reason=f"bad operand {o!r}")

    def operand(self, o: Any, env, shape: tuple, loc: SourceLoc) -> np.ndarray:
        if isinstance(o, n.View):
            x = self.get(o, env, loc).astype(_F32)
            return x.reshape(x.shape[0], *([1] * (len(shape) - 1))) if x.ndim != len(shape) else x
        if isinstance(o, n.Lit):
            return np.asarray(o.value, _F32)
        if isinstance(o, n.Param):
            if o.name in self.scalars:
                return np.asarray(self.scalars[o.name], _F32)
            if o.name in env:  # a loop variable's value
                return np.asarray(env[o.name], _F32)
            raise error("C2N2401", loc, what=f"scalar '{o.name}'")
        raise error("C2N2449", loc, reason=f"bad operand {o!r}")


def _bits(op: Op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A bitwise op or shift on 32-bit patterns (``>>`` logical), as the engines compute it on
    integer tiles; the destination's dtype then reads the pattern."""
    u = np.asarray(a).astype(np.int64) & 0xFFFFFFFF
    v = np.asarray(b).astype(np.int64) & 0xFFFFFFFF
    if op == Op.SHL:
        return (u << (v & 31)) & 0xFFFFFFFF
    if op == Op.SHR:
        return u >> (v & 31)
    return num.BINARY[op](u, v)


def _outer(idx: tuple) -> tuple:
    """Index arrays of an indirect dim select whole rows: turn them into an open mesh."""
    arrays = [i for i in idx if isinstance(i, np.ndarray)]
    if not arrays:
        return idx
    out: list[Any] = []
    for i in idx:
        if isinstance(i, np.ndarray):
            out.append(i.reshape(-1, *([1] * (sum(isinstance(x, slice) for x in idx)))))
        else:
            out.append(i)
    # mixed slice/array indexing: convert slices after the array to aranges for a clean mesh
    final: list[Any] = []
    nd = sum(isinstance(x, (slice, np.ndarray)) for x in out)
    pos = 0
    for i in out:
        if isinstance(i, slice):
            r = np.arange(i.start, i.stop if i.stop is not None else -1, i.step)
            shape = [1] * nd
            shape[pos] = r.size
            final.append(r.reshape(shape))
            pos += 1
        elif isinstance(i, np.ndarray):
            shape = [1] * nd
            shape[pos] = i.size
            final.append(i.reshape(shape))
            pos += 1
        else:
            final.append(i)
    return tuple(final)
