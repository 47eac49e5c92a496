"""The executable meaning of the intent layer, on NumPy, and the fidelity error bound.

``evaluate(kernel, inputs, scalars, mode)`` runs a kernel's :class:`~cuda2nki.ir.nodes.Compute`
statements in order and returns its outputs (role ``out``/``inout``):

* ``mode="fp64"`` -- the oracle: float arithmetic in float64 (float narrowing casts are ignored:
  the oracle is the exact computation), integer arithmetic in the declared integer dtypes with C
  semantics (wraparound, truncating division) in both modes.
* ``mode="declared"`` -- every operation rounds its result to its declared dtype (see
  :mod:`cuda2nki.ir.types`; bf16/fp16/fp8 computed in float32 and rounded, as hardware does),
  reductions accumulate in ``acc_dtype`` (NumPy order: sequential over the reduced axis, BLAS for
  contractions), assignments round to the target's dtype.  Outputs have their declared dtype.

Inputs are first rounded to their declared dtype (bf16 travels as float32: reference/NKI.md §14).
Scalar sizes missing from ``scalars`` are inferred from input shapes where a dim is a bare symbol.
Evaluation is vectorised: a Compute is one NumPy expression over its whole domain (reduction axes
become leading broadcast dims; ``sum(a*b)`` contractions go through ``einsum``); reads that fall
outside a tensor are an error (``C2N2403``) unless masked by the guard, a ``select`` or a
reduction's ``where``.

A reduction is evaluated once per value of the frame variables it reads (its free indices): a
reduction nested in another one's body (the row max inside ``sum(exp(x - max(x)))``) does not
depend on the enclosing reduction's variable, so its value is kept (until a tensor is written)
and reused for every chunk of the enclosing one: O(C) work per row, not O(C^2).  Its chunks are
sized by those free indices alone.  A reduction over a scan or over an enclosing iteration's
``carry`` is evaluated wherever it occurs.

The error bound that ``analyse`` propagates is described in :mod:`cuda2nki.ir.evalbounds`;
reductions and scans are evaluated by :mod:`cuda2nki.ir.evalreduce`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cuda2nki.diagnostics import SourceLoc, error
from cuda2nki.ir import extremum as argext
from cuda2nki.ir import nodes as n
from cuda2nki.ir import numerics as num
from cuda2nki.ir import overflow
from cuda2nki.ir.bitcast import bitcast_error, bits_as
from cuda2nki.ir.evalbounds import GELU_LIPSCHITZ, TRANSCENDENTAL_ULPS, BoundRules, gamma
from cuda2nki.ir.evalreduce import Reductions
from cuda2nki.ir.evalvalues import (
    Analysis,
    Val,
    _and,
    _chunkable,
    _clean,
    _Frame,
    _inexact,
    _or,
    _start,
    _text,
)
from cuda2nki.ir.ops import Op, Role, is_float
from cuda2nki.ir.types import (
    TypeEnv,
    binary_dtype,
    np_dtype,
    promote,
    unary_dtype,
    unit_roundoff,
)

#: intermediate arrays larger than this many elements are reduced in chunks
CHUNK_ELEMENTS = 1 << 23

__all__ = [
    "CHUNK_ELEMENTS",
    "GELU_LIPSCHITZ",
    "TRANSCENDENTAL_ULPS",
    "Analysis",
    "Val",
    "analyse",
    "error_bound",
    "evaluate",
    "gamma",
    "infer_scalars",
]

# --------------------------------------------------------------------------- public API


def evaluate(
    kernel: n.Kernel,
    inputs: Mapping[str, np.ndarray],
    scalars: Mapping[str, Any] | None = None,
    mode: str = "fp64",
) -> dict[str, np.ndarray]:
    """Outputs of an intent kernel (``mode`` ``"fp64"`` or ``"declared"``)."""
    if mode not in ("fp64", "declared"):
        raise ValueError(f"mode must be 'fp64' or 'declared', not {mode!r}")
    ev = _Evaluator(kernel, inputs, scalars or {}, declared=mode == "declared", analysis=False)
    ev.run()
    return {t.name: ev.arrays[t.name] for t in kernel.outputs}


def analyse(
    kernel: n.Kernel,
    inputs: Mapping[str, np.ndarray],
    scalars: Mapping[str, Any] | None = None,
    u_in: float | None = None,
    u_acc: float | None = None,
) -> Analysis:
    """fp64 outputs with per-element error bounds, magnitudes, reduction lengths, acc dtypes.

    ``u_in`` / ``u_acc`` replace the unit roundoff of float inputs / of every float accumulator
    (reductions, scans, accumulating writes): the bound under a precision hypothesis such as
    "the port rounds its inputs to bf16" (``u_in=2**-8``) or "accumulates in bf16" (``u_acc=2**-8``).
    """
    ev = _Evaluator(kernel, inputs, scalars or {}, False, True, u_in, u_acc)
    ev.run()
    outs = [t.name for t in kernel.outputs]
    return Analysis(
        values={o: ev.arrays[o] for o in outs},
        bound={o: np.broadcast_to(ev.errs[o], ev.arrays[o].shape).copy() for o in outs},
        magnitude={o: np.broadcast_to(ev.mags[o], ev.arrays[o].shape).copy() for o in outs},
        reduction_length={o: ev.ks.get(o, 0) for o in outs},
        acc_dtype={o: ev.accs.get(o) for o in outs},
    )


def error_bound(
    kernel: n.Kernel,
    inputs: Mapping[str, np.ndarray],
    scalars: Mapping[str, Any] | None = None,
    c: float = 1.0,
    u_in: float | None = None,
    u_acc: float | None = None,
) -> dict[str, np.ndarray]:
    """Componentwise bound ``c·e`` per output (see the module docstring for ``e`` and ``c``).

    ``c = 1`` bounds one implementation against the exact result; use ``c = 2`` for the
    difference of two implementations.  ``u_in``/``u_acc``: see :func:`analyse`.
    """
    a = analyse(kernel, inputs, scalars, u_in=u_in, u_acc=u_acc)
    return {k: c * v for k, v in a.bound.items()}


def infer_scalars(
    kernel: n.Kernel, inputs: Mapping[str, np.ndarray], scalars: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``scalars`` completed from input shapes where a dim is a bare, unbound symbol."""
    out = dict(scalars or {})
    for t in kernel.params:
        if isinstance(t, n.TensorDecl) and t.name in inputs:
            shape = np.shape(inputs[t.name])
            if len(shape) != t.rank:
                continue
            for dim, s in zip(t.shape, shape):
                if isinstance(dim, n.Sym) and dim.name not in out:
                    out[dim.name] = int(s)
    return out


# --------------------------------------------------------------------------- the evaluator


class _Evaluator(Reductions, BoundRules):
    def __init__(
        self,
        kernel: n.Kernel,
        inputs: Mapping[str, np.ndarray],
        scalars: Mapping[str, Any],
        declared: bool,
        analysis: bool,
        u_in: float | None = None,
        u_acc: float | None = None,
    ) -> None:
        self.k = kernel
        self.declared = declared
        self.analysis = analysis
        self.u_in, self.u_acc = u_in, u_acc
        self.types = TypeEnv(kernel)
        self.scalars = infer_scalars(kernel, inputs, scalars)
        self.arrays: dict[str, np.ndarray] = {}
        self.errs: dict[str, Any] = {}
        self.mags: dict[str, Any] = {}
        self.ks: dict[str, int] = {}
        self.accs: dict[str, str | None] = {}
        #: kernel-entry values of ``inout`` tensors: what reads see (below)
        self.entry: dict[str, tuple[np.ndarray, Any, Any]] = {}
        #: values of the carried variables of the iterations being evaluated (``carry(v)``)
        self.carried: dict[str, Val] = {}
        #: the last value of each reduction since the last write (by node identity), with the
        #: values of the frame variables it read then
        self.reduced: dict[int, tuple[tuple, Val]] = {}
        #: frame variables each reduction reads (None: all of them), by node identity
        self.reads: dict[int, tuple[n.Reduce, frozenset[str] | None]] = {}
        #: min/max reductions a candidate is compared with (argmin / argmax), by node identity
        self.ranked = argext.compared_extrema(kernel) if analysis else frozenset()
        self._bind(inputs)

    # ------------------------------------------------------------------ setup
    def cdt(self, dtype: str) -> np.dtype:
        """NumPy dtype values of ``dtype`` are held in."""
        if is_float(dtype):
            return np.dtype(np.float64) if not self.declared else np_dtype(dtype)
        return np_dtype(dtype)

    def _shape(self, t: n.TensorDecl) -> tuple[int, ...]:
        return tuple(int(self.size(s, _Frame(), t.loc)) for s in t.shape)

    def _bind(self, inputs: Mapping[str, np.ndarray]) -> None:
        for p in self.k.params:
            if isinstance(p, n.ScalarDecl):
                if p.name not in self.scalars:
                    raise error("C2N2401", p.loc, what=f"scalar parameter '{p.name}'")
        for t in (*[p for p in self.k.params if isinstance(p, n.TensorDecl)], *self.k.temps):
            shape = self._shape(t)
            given = inputs.get(t.name)
            if given is None:
                if t.role in (Role.IN, Role.INOUT):
                    raise error("C2N2401", t.loc, what=f"input tensor '{t.name}'")
                arr = np.zeros(shape, np_dtype(t.dtype))
            else:
                arr = np.asarray(given)
                if arr.shape != shape:
                    raise error(
                        "C2N2402", t.loc, name=t.name, expected=list(shape), got=list(arr.shape)
                    )
                arr = arr.astype(np_dtype(t.dtype))  # round to the declared dtype once
            self.arrays[t.name] = arr.astype(self.cdt(t.dtype), copy=False)
            if self.analysis:
                given_in = given is not None
                u = unit_roundoff(t.dtype)
                if self.u_in is not None and u:
                    u = self.u_in
                absx = np.abs(self.arrays[t.name]).astype(np.float64, copy=False)
                self.errs[t.name] = u * absx if given_in and u else 0.0
                self.mags[t.name] = absx if given_in else 0.0
            if t.role is Role.INOUT and t in self.k.params:
                self.entry[t.name] = (
                    self.arrays[t.name].copy(),
                    self.errs.get(t.name, 0.0),
                    self.mags.get(t.name, 0.0),
                )

    def uacc(self, acc: str) -> float:
        """Unit roundoff of an accumulator (the ``u_acc`` hypothesis replaces float ones)."""
        u = unit_roundoff(acc)
        return self.u_acc if (self.u_acc is not None and u) else u

    def scalar_value(self, name: str, loc: SourceLoc) -> Any:
        if name not in self.scalars:
            raise error("C2N2401", loc, what=f"scalar '{name}'")
        return self.scalars[name]

    # ------------------------------------------------------------------ statements
    def run(self) -> None:
        with np.errstate(all="ignore"):
            for s in self.k.body:
                if not isinstance(s, n.Compute):
                    raise error("C2N2404", s.loc, what=type(s).__name__)  # type: ignore[attr-defined]
                self.compute(s)

    def compute(self, c: n.Compute) -> None:
        self.reduced = {}
        frame, limits = self._domain(c.domain)
        shape = tuple(frame.extents[-(frame.rank - j)] for j in range(frame.rank))
        total = int(np.prod(shape)) if shape else 1
        if total > 2 * CHUNK_ELEMENTS and not limits and _chunkable(c):
            # large domains run in slabs of the first axis (it is parallel and the statement
            # does not read its own target, so the slabs are independent)
            first, ext = c.domain.axes[0].name, shape[0]
            step = max(1, CHUNK_ELEMENTS // max(total // max(ext, 1), 1))
            for lo in range(0, ext, step):
                hi = min(ext, lo + step)
                var = np.arange(lo, hi, dtype=np.int64).reshape([hi - lo] + [1] * (frame.rank - 1))
                self._compute_in(c, frame.with_var(first, var), [])
            return
        self._compute_in(c, frame, limits)

    def _chunk_step(self, rest: int) -> int:
        """How many values of a first axis go in one chunk when each carries ``rest`` elements."""
        return max(1, CHUNK_ELEMENTS // max(rest, 1))

    def _compute_in(self, c: n.Compute, frame: _Frame, limits: list) -> None:
        shape = tuple(frame.extents[-(frame.rank - j)] for j in range(frame.rank))
        val = self.expr(c.expr, frame)
        mask = np.ones(shape, bool)
        for name, lim in limits:  # extents that depend on earlier axes (triangular domains)
            mask = mask & np.broadcast_to(frame.vars[name] < lim, shape)
        if c.domain.guard is not None:
            g = self.expr(c.domain.guard, frame)
            mask = mask & np.broadcast_to(g.v.astype(bool, copy=False), shape)
            if self.analysis and np.any(np.asarray(g.e) > 0):
                val.e = np.where(np.broadcast_to(g.e, shape) > 0, np.inf, val.e)
        if val.oob is not None and np.any(np.broadcast_to(val.oob, shape) & mask):
            raise error(
                "C2N2403", c.loc, what=f"a read in the statement writing '{c.target.tensor}'"
            )
        self.write(c, frame, shape, mask, val)

    def _domain(self, d: n.Domain) -> tuple[_Frame, list[tuple[str, np.ndarray]]]:
        """The frame of a domain; an extent may depend on earlier axes (masked to its bound)."""
        axes: list[tuple[str, int]] = []
        limits: list[tuple[str, np.ndarray]] = []
        count = len(d.axes)
        for k, a in enumerate(d.axes):
            pad = [(f"\0{j}", 1) for j in range(k, count)]
            ext = self.size(a.extent, _Frame().extend(axes + pad), a.loc)
            if isinstance(ext, Val):
                raise error("C2N2410", a.loc, axis=a.name)
            if np.ndim(ext):
                limits.append((a.name, np.asarray(ext)))
                ext = int(np.max(ext)) if np.size(ext) else 0
            axes.append((a.name, max(int(ext), 0)))
        return _Frame().extend(axes), limits

    def write(self, c: n.Compute, frame: _Frame, shape: tuple, mask: np.ndarray, val: Val) -> None:
        try:
            self._write(c, frame, shape, mask, val)
        finally:
            self.reduced = {}  # a reduction's value holds until a tensor is written

    def _write(self, c: n.Compute, frame: _Frame, shape: tuple, mask: np.ndarray, val: Val) -> None:
        name = c.target.tensor
        if name not in self.arrays:
            raise error("C2N2405", c.target.loc, name=name)
        arr = self.arrays[name]
        decl = self.k.tensors[name]
        if len(c.target.index) != arr.ndim:
            raise error("C2N2406", c.target.loc, name=name, rank=arr.ndim, got=len(c.target.index))
        v = val.v.astype(self._store_dtype(decl), copy=False)
        fast = self._identity_target(c, frame, arr.shape) and mask.all() and c.accumulate is None
        if fast:
            starts = [_start(frame.vars[nm]) for nm in c.domain.names]
            sl = tuple(slice(s0, s0 + e) for s0, e in zip(starts, shape))
            arr[sl] = np.broadcast_to(v, shape)
            if self.analysis:
                self._store_bound(name, decl, c, val, sl, shape)
            return
        idx = []
        unsure = np.zeros(shape, bool)  # points whose target index may differ between runs
        for i, s in enumerate(c.target.index):
            iv = self.size(s, frame, c.target.loc)
            if isinstance(iv, Val):
                unsure |= np.broadcast_to(np.asarray(iv.e) > 0, shape)
            iv = np.broadcast_to(np.asarray(iv.v if isinstance(iv, Val) else iv), shape)[mask]
            if iv.size and (iv.min() < 0 or iv.max() >= arr.shape[i]):
                raise error("C2N2403", c.target.loc, what=f"the write to '{name}'")
            idx.append(iv)
        idx_t = tuple(idx)
        vals = np.broadcast_to(v, shape)[mask]
        if c.accumulate is None:
            arr[idx_t] = vals
        else:
            num.COMBINE[c.accumulate].at(arr, idx_t, vals)
        if self.analysis:
            self._store_bound_scatter(name, decl, c, val, idx_t, shape, mask)
            moved = unsure & mask
            if moved.any():  # a value written elsewhere: any element may gain or lose it
                lost = np.abs(np.broadcast_to(val.v, shape)[moved].astype(np.float64)).sum()
                self.errs[name] = (
                    self.errs[name] + lost + np.broadcast_to(val.e, shape)[moved].max()
                )

    def _store_dtype(self, decl: n.TensorDecl) -> np.dtype:
        return self.cdt(decl.dtype)

    def _identity_target(self, c: n.Compute, frame: _Frame, tshape: tuple) -> bool:
        names = c.domain.names
        if len(c.target.index) != len(names):
            return False
        for s, nm, ext in zip(c.target.index, names, tshape):
            if not (isinstance(s, n.Sym) and s.name == nm):
                return False
            if _start(frame.vars[nm]) + frame.extents[frame.dims[nm]] > ext:
                return False
        return True

    def _note_k(self, name: str, val: Val) -> None:
        if val.k >= self.ks.get(name, 0):
            self.ks[name] = val.k
            self.accs[name] = val.acc if val.k else self.accs.get(name)

    # ------------------------------------------------------------------ sizes / indices
    def size(self, e: n.SizeExpr, frame: _Frame, loc: SourceLoc) -> Any:
        """Evaluate an index/size; returns an int, an int64 array, or (for Dyn) a Val."""
        if isinstance(e, n.Sym):
            if e.name in frame.vars:
                return frame.vars[e.name]
            v = self.scalar_value(e.name, loc)
            return int(v)
        if isinstance(e, n.Const):
            return e.value
        if isinstance(e, n.Dyn):
            d = self.expr(e.expr, frame)
            return d
        a = self.size(e.a, frame, loc)  # type: ignore[attr-defined]
        b = self.size(e.b, frame, loc)  # type: ignore[attr-defined]
        if isinstance(a, Val) or isinstance(b, Val):
            return self._dyn_bin(e, a, b)
        if isinstance(e, (n.FloorDiv, n.CeilDiv, n.Mod)) and np.any(np.asarray(b) == 0):
            raise error("C2N2407", loc, expr=_text(e))
        return e.apply(a, b)  # type: ignore[attr-defined]

    def _dyn_bin(self, e: n.SizeExpr, a: Any, b: Any) -> Val:
        va = a if isinstance(a, Val) else Val(np.asarray(a), "int64")
        vb = b if isinstance(b, Val) else Val(np.asarray(b), "int64")
        with np.errstate(all="ignore"):
            if isinstance(e, (n.FloorDiv, n.Mod, n.CeilDiv)):
                safe = np.where(vb.v == 0, 1, vb.v)
                out = e.apply(va.v.astype(np.int64, copy=False), safe.astype(np.int64, copy=False))  # type: ignore[attr-defined]
            else:
                out = e.apply(va.v.astype(np.int64, copy=False), vb.v.astype(np.int64, copy=False))  # type: ignore[attr-defined]
        return Val(
            np.asarray(out),
            "int64",
            e=_inexact(va.e, vb.e),
            oob=_or(va.oob, vb.oob),
        )

    def _index(self, s: n.SizeExpr, frame: _Frame, loc: SourceLoc) -> tuple[Any, Any, Any]:
        """(int index array, uncertainty, oob) of one index."""
        r = self.size(s, frame, loc)
        if isinstance(r, Val):
            return np.asarray(r.v).astype(np.int64, copy=False), r.e, r.oob
        return np.asarray(r, dtype=np.int64), 0.0, None

    # ------------------------------------------------------------------ expressions
    def expr(self, e: n.Expr, frame: _Frame) -> Val:
        meth = getattr(self, "x_" + type(e).__name__, None)
        if meth is None:
            raise TypeError(f"not a value expression: {type(e).__name__}")
        return meth(e, frame)

    def x_Read(self, e: n.Read, frame: _Frame) -> Val:
        if e.tensor not in self.arrays:
            raise error("C2N2405", e.loc, name=e.tensor)
        # A read of an inout tensor sees its value at kernel entry, as in CUDA, where a thread's
        # own earlier stores are resolved by the lifter and other threads' stores are races;
        # generated ports read the input while writing the output the same way.
        entry = self.entry.get(e.tensor)
        arr = self.arrays[e.tensor] if entry is None else entry[0]
        dtype = self.k.tensors[e.tensor].dtype
        if len(e.index) != arr.ndim:
            raise error("C2N2406", e.loc, name=e.tensor, rank=arr.ndim, got=len(e.index))
        plan = self._slice_plan(e, frame, arr.shape)
        if plan is not None:
            take = plan
            oob, unc = None, 0.0
        else:
            idx, unc, oob = [], 0.0, None
            for d, s in enumerate(e.index):
                iv, ie, io = self._index(s, frame, e.loc)
                bad = (iv < 0) | (iv >= arr.shape[d])
                if np.any(bad):
                    oob = _or(oob, bad)
                    iv = np.clip(iv, 0, max(arr.shape[d] - 1, 0))
                oob = _or(oob, io)
                unc = _inexact(unc, ie)
                idx.append(iv)
            if arr.size == 0:
                idx = [np.zeros_like(i) for i in idx]
                arr = np.zeros((1,) * arr.ndim, arr.dtype)

            def take(x: Any, _idx=tuple(idx), _shape=arr.shape) -> Any:
                if np.ndim(x) == 0:
                    return x
                return np.broadcast_to(x, _shape)[_idx]

        v = take(arr)
        if not self.analysis:
            return Val(v, dtype, oob=oob)
        if entry is not None:
            err, mag, k, acc = take(entry[1]), take(entry[2]), 0, None
        else:
            err, mag = take(self.errs[e.tensor]), take(self.mags[e.tensor])
            k, acc = self.ks.get(e.tensor, 0), self.accs.get(e.tensor)
        if np.any(np.asarray(unc) > 0):
            err = np.where(np.asarray(unc) > 0, np.inf, err)
        return Val(v, dtype, err, mag, oob, k, acc)

    def _slice_plan(self, e: n.Read, frame: _Frame, shape: tuple) -> Any:
        """A view-based reader when the index is distinct frame variables in range, else None."""
        dims, starts = [], []
        for s, ext in zip(e.index, shape):
            if not (isinstance(s, n.Sym) and s.name in frame.dims):
                return None
            d = frame.dims[s.name]
            var = frame.vars[s.name]
            start = int(var.flat[0]) if var.size else 0
            if start + frame.extents[d] > ext:
                return None
            dims.append(d)
            starts.append(start)
        if len(set(dims)) != len(dims):
            return None
        exts = [frame.extents[d] for d in dims]
        if not dims:
            return lambda x: x
        rank = -min(dims)
        order = sorted(range(len(dims)), key=lambda t: dims[t])
        out_shape = [1] * rank
        for d, ext in zip(dims, exts):
            out_shape[rank + d] = ext

        def take(x: Any) -> Any:
            if np.ndim(x) == 0:
                return x
            x = np.broadcast_to(x, shape)[tuple(slice(s, s + t) for s, t in zip(starts, exts))]
            return x.transpose(order).reshape(out_shape)

        return take

    def x_Lit(self, e: n.Lit, frame: _Frame) -> Val:
        return self._const(e.value, e.dtype)

    def _const(self, value: Any, dtype: str) -> Val:
        """A literal or scalar: its value in its declared dtype (as the program holds it)."""
        v = np.asarray(value).astype(np_dtype(dtype)).astype(self.cdt(dtype), copy=False)
        if not self.analysis:
            return Val(v, dtype)
        return Val(v, dtype, 0.0, np.abs(v.astype(np.float64, copy=False)))

    def x_Param(self, e: n.Param, frame: _Frame) -> Val:
        if e.name in frame.vars:
            return self._int_val(frame.vars[e.name], "int32")
        decl = self.k.scalars.get(e.name)
        return self._const(self.scalar_value(e.name, e.loc), decl.dtype if decl else "int32")

    def x_IndexValue(self, e: n.IndexValue, frame: _Frame) -> Val:
        r = self.size(e.expr, frame, e.loc)
        if isinstance(r, Val):
            return Val(r.v.astype(self.cdt(e.dtype), copy=False), e.dtype, r.e, np.abs(r.v), r.oob)
        return self._int_val(np.asarray(r), e.dtype)

    def _int_val(self, arr: np.ndarray, dtype: str) -> Val:
        v = arr.astype(self.cdt(dtype), copy=False)
        return Val(
            v, dtype, 0.0, np.abs(v.astype(np.float64, copy=False)) if self.analysis else 0.0
        )

    def _compute(self, fn: Any, dtype: str, result: str, *xs: np.ndarray) -> np.ndarray:
        """Apply ``fn`` to operands held in ``dtype``'s compute type; round to ``result``'s."""
        target = self.cdt(dtype)
        if self.declared and is_float(dtype) and target.itemsize < 4:
            out = fn(*(np.asarray(x).astype(np.float32, copy=False) for x in xs))
        else:
            out = fn(*(np.asarray(x).astype(target, copy=False) for x in xs))
        return np.asarray(out).astype(self.cdt(result), copy=False)

    def x_Unary(self, e: n.Unary, frame: _Frame) -> Val:
        x = self.expr(e.x, frame)
        rd = unary_dtype(e.op, x.dtype)
        cd = rd if e.op.info.kind != "logical" else x.dtype
        v = self._compute(num.UNARY[e.op], cd, rd, x.v)
        out = Val(v, rd, oob=x.oob, k=x.k, acc=x.acc)
        if self.analysis:
            out.e, out.m = self._unary_bound(e.op, x, v, rd)
            out.e = overflow.guard(out.e, v, rd)
        return out

    def x_Binary(self, e: n.Binary, frame: _Frame) -> Val:
        a, b = self.expr(e.a, frame), self.expr(e.b, frame)
        rd = binary_dtype(e.op, a.dtype, b.dtype)
        kind = e.op.info.kind
        cd = promote(a.dtype, b.dtype) if kind in ("compare", "logical") else rd
        v = self._compute(num.BINARY[e.op], cd, rd, a.v, b.v)
        k, acc = (a.k, a.acc) if a.k >= b.k else (b.k, b.acc)
        out = Val(v, rd, oob=_or(a.oob, b.oob), k=k, acc=acc)
        if self.analysis:
            out.e, out.m = self._binary_bound(e.op, a, b, v, rd)
            out.e = overflow.guard(out.e, v, rd)
            if e.op in (Op.ADD, Op.SUB) and is_float(rd):
                out.e = out.e + self._addend_slack(e, a, b)
            elif e.op in (Op.MIN, Op.MAX):
                out.gap = self._extremum_gap(e, a, b)
            elif e.op in (Op.EQ, Op.NE):
                out.e = self._own_extremum(e, frame, a, b, out.e)
        return out

    def x_Select(self, e: n.Select, frame: _Frame) -> Val:
        c, a, b = (self.expr(x, frame) for x in (e.cond, e.a, e.b))
        rd = promote(a.dtype, b.dtype)
        t = self.cdt(rd)
        cond = np.asarray(c.v).astype(bool, copy=False)
        v = np.where(
            cond, np.asarray(a.v).astype(t, copy=False), np.asarray(b.v).astype(t, copy=False)
        )
        oob = _or(c.oob, _or(_and(a.oob, cond), _and(b.oob, ~cond)))
        k, acc = max((a.k, a.acc or ""), (b.k, b.acc or ""))
        out = Val(v, rd, oob=oob, k=k, acc=acc or None)
        if self.analysis:
            flip = np.asarray(c.e) > 0
            chosen = np.where(cond, a.e, b.e)
            wide = np.maximum(a.e, b.e) + np.abs(np.asarray(a.v, np.float64) - b.v)
            out.e = _clean(np.where(flip, wide, chosen)) if np.any(flip) else chosen
            out.m = np.where(cond, a.m, b.m)
        return out

    def x_Bitcast(self, e: n.Bitcast, frame: _Frame) -> Val:
        x = self.expr(e.x, frame)
        out = Val(bits_as(x.v, x.dtype, e.dtype), e.dtype, oob=x.oob)
        if self.analysis:
            out.e, out.m = bitcast_error(x.e, e.dtype), np.abs(np.asarray(out.v, np.float64))
        return out

    def x_Cast(self, e: n.Cast, frame: _Frame) -> Val:
        x = self.expr(e.x, frame)
        t = self.cdt(e.dtype)
        if e.dtype == "bool":
            v = np.asarray(x.v) != 0
        elif not is_float(e.dtype) and is_float(x.dtype):
            v = np.trunc(np.asarray(x.v, dtype=np.float64)).astype(t, copy=False)
        else:
            v = np.asarray(x.v).astype(t, copy=False)
        out = Val(v, e.dtype, oob=x.oob, k=x.k, acc=x.acc)
        if self.analysis:
            absv = np.abs(np.asarray(v, np.float64))
            if is_float(e.dtype):
                narrow = unit_roundoff(e.dtype) > unit_roundoff(x.dtype) or not is_float(x.dtype)
                out.e = x.e + (unit_roundoff(e.dtype) * absv if narrow else 0.0)
                out.e = overflow.guard(out.e, absv, e.dtype)
            elif e.dtype == "bool":
                out.e = np.where(np.abs(np.asarray(x.v, np.float64)) <= x.e, 1.0, 0.0)
            else:
                # truncation moves only where an integer lies within x ± e
                xv, ex = np.asarray(x.v, np.float64), np.asarray(x.e, np.float64)
                tv = np.trunc(xv)
                lo, hi = np.trunc(xv - ex), np.trunc(xv + ex)
                out.e = _clean(np.maximum(np.abs(lo - tv), np.abs(hi - tv)))
            out.m = absv if not is_float(e.dtype) else x.m
        return out

    # ------------------------------------------------------------------ iterations
    def x_Carry(self, e: n.Carry, frame: _Frame) -> Val:
        got = self.carried.get(e.name)
        if got is None:
            raise error("C2N2445", e.loc, what=f"carry({e.name}) outside its loop")
        return got

    def x_Iterate(self, e: n.Iterate, frame: _Frame) -> Val:
        """Every element iterates until its own condition fails (at most ``trips`` times): the
        loop runs in lockstep over the elements, an element that has left keeps its values.  In
        analysis mode an element whose test may flip (``cond.e > 0``) is unsure from then on:
        its values carry the difference between stopping and going on.  Each step's bound is taken
        from values at its start held as exact (see :meth:`_nominal`)."""
        state = {
            v: self._assigned(self.expr(x, frame), t) for v, t, x in zip(e.names, e.dtypes, e.init)
        }
        trips = int(self.size(e.trips, frame, e.loc))
        saved = self.carried
        active: Any = np.asarray(True)
        unsure: Any = np.asarray(False)
        if e.enter is not None:
            enter = self.expr(e.enter, frame)
            active = np.asarray(enter.v) != 0
            unsure = np.asarray(enter.e) > 0 if self.analysis else unsure
        try:
            for _ in range(max(trips, 0)):
                if not np.any(active) and not np.any(unsure):
                    break
                self.carried = {**saved, **self._nominal(state)}
                new = [self._assigned(self.expr(u, frame), t) for u, t in zip(e.update, e.dtypes)]
                c = self.expr(e.cond, frame)
                for v, nv in zip(e.names, new):
                    state[v] = self._keep(active, unsure, nv, state[v])
                if self.analysis:
                    unsure = unsure | (active & (np.asarray(c.e) > 0))
                active = active & (np.asarray(c.v) != 0)
        finally:
            self.carried = saved
        return state[e.result]

    def _nominal(self, state: dict[str, Val]) -> dict[str, Val]:
        """The carried values an iteration computes from, taken as exact: a convergent iteration
        corrects the errors of the steps before (a first-order bound carried through K steps
        would grow K-fold and cannot see that), so the bound of an iteration is one step's.
        Where an element's exit may flip, :meth:`_keep` accumulates the spread of its values."""
        if not self.analysis:
            return state
        return {v: Val(x.v, x.dtype, 0.0, x.m, x.oob, x.k, x.acc) for v, x in state.items()}

    def _assigned(self, x: Val, dtype: str) -> Val:
        """``x`` converted to a carried variable's dtype (as a C assignment does)."""
        if x.dtype == dtype:
            return x
        t = self.cdt(dtype)
        if not is_float(dtype) and is_float(x.dtype):
            v = np.trunc(np.asarray(x.v, dtype=np.float64)).astype(t, copy=False)
        else:
            v = np.asarray(x.v).astype(t, copy=False)
        out = Val(v, dtype, x.e, x.m, x.oob, x.k, x.acc)
        if self.analysis and is_float(dtype) and unit_roundoff(dtype) > unit_roundoff(x.dtype):
            out.e = x.e + unit_roundoff(dtype) * np.abs(np.asarray(v, np.float64))
            out.e = overflow.guard(out.e, x.v, dtype)
        return out

    def _keep(self, active: Any, unsure: Any, new: Val, old: Val) -> Val:
        """``active ? new : old`` per element (``unsure``: either, in analysis mode)."""
        v = np.where(active, new.v, old.v)
        k, acc = max((new.k, new.acc or ""), (old.k, old.acc or ""))
        out = Val(v, old.dtype, oob=_or(_and(new.oob, active), old.oob), k=k, acc=acc or None)
        if self.analysis:
            chosen = np.where(active, new.e, old.e)
            wide = np.add(new.e, old.e) + np.abs(
                np.asarray(new.v, np.float64) - np.asarray(old.v, np.float64)
            )
            out.e = _clean(np.where(unsure, wide, chosen)) if np.any(unsure) else chosen
            out.m = np.where(active, new.m, old.m)
        return out

    # ------------------------------------------------------------------ reductions

    # ------------------------------------------------------------------ bound rules
