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

Error bound
-----------
``analyse`` evaluates in float64 and propagates, per element, a first-order-rigorous bound ``e`` on
``|computed - exact|`` for one implementation that performs every operation in (at least) its
declared dtype, in any order, together with the magnitude ``m`` (the expression evaluated on
absolute values: ``|A|·|B|`` for a contraction, ``Σ|x|`` for a sum, ``|f(x)|`` for elementwise
math), the longest reduction length ``K`` and the accumulation dtype of each output.  Rules
(``u`` = unit roundoff of the result dtype, 2^-24 for float32; ``γ_K = K·u/(1-K·u)``):

* read of an input: ``u_in·|x|`` (the input may be rounded once to its declared dtype -- the
  ``2·u_in`` of a product of two inputs); literals and scalars: exact (they are taken, like the
  inputs, as the value their declared dtype holds); temporaries: the bound they were written with.
* ``a ± b``: ``e_a + e_b + u|v|``; ``a·b``: ``|a|e_b + |b|e_a + e_a·e_b + u|v|``;
  ``a/b``: ``(e_a + |v|·e_b)/(|b| - e_b) + u|v|`` (infinite if ``|b| <= e_b``); ``max``/``min``:
  ``max(e_a, e_b)``.
* monotone unary math (exp, log, sqrt, reciprocal, rsqrt, floor, ...): the exact image of the
  interval ``x ± e`` (infinite where it leaves the domain); bounded-slope functions (tanh, sigmoid,
  erf, atan, gelu, silu): their Lipschitz constant times ``e``; sin/cos: ``e + 2u|x|`` (argument
  reduction); plus rounding: ``u|v|`` for the correctly rounded ``sqrt``/``reciprocal``,
  ``2·TRANSCENDENTAL_ULPS·u·|v|`` for the others (one ulp <= ``2u|v|``).
* ``reduce(add, K terms)``: ``Σe + γ_K(u_acc)·Σ|v|`` (valid for every summation order);
  ``max``/``min``: the largest ``e``; ``mul``: ``Π(|x|+e) - Π|x| + γ_K·Π(|x|+e)``.
  Scans: the same per prefix (``γ`` of the prefix length).
* comparisons may flip where ``|a-b| <= e_a + e_b``; a ``select`` on a flippable condition has
  error ``|a-b| + max(e_a, e_b)``; a float -> int conversion moves only where an integer lies
  within ``x ± e``; integer arithmetic on inexact values is unbounded.  A write whose target
  index may move (a scatter indexed by such a conversion) adds the sum of the moved values to
  every element of the target.
* writing to a narrower target adds ``u_target·|v|``.  Every float op also adds ``u·tiny`` for
  gradual underflow.

For contractions this is ``(2·u_in + u_mul + γ_K(u_acc))·(|A|·|B|)`` per element.
``error_bound`` returns ``c·e``; ``c = 1`` (default) bounds one implementation against the exact
result, ``c = 2`` the difference between *two* implementations (e.g. the CUDA kernel in the SIMT
interpreter and an NKI port), each within ``e`` of the exact value.  ``u_in``/``u_acc`` give the
bound under a precision hypothesis (inputs rounded to / accumulation in a narrower dtype).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda2nki.diagnostics import SourceLoc, error
from cuda2nki.ir import extremum as argext
from cuda2nki.ir import nodes as n
from cuda2nki.ir import numerics as num
from cuda2nki.ir import overflow
from cuda2nki.ir.bitcast import bitcast_error, bits_as
from cuda2nki.ir.ops import AxisKind, Op, Role, is_float, is_int
from cuda2nki.ir.types import (
    TypeEnv,
    binary_dtype,
    dtype_of,
    np_dtype,
    promote,
    tiny,
    unary_dtype,
    unit_roundoff,
)

#: allowed error of transcendental functions, in ulps (CUDA's single-precision math functions are
#: within 1-4 ulp; NKI's ScalarE activation accuracy is unspecified: a ruling, change deliberately)
TRANSCENDENTAL_ULPS = 4
#: max |d/dx| of gelu (1.129) and silu (1.0998), rounded up
GELU_LIPSCHITZ = 1.13
#: intermediate arrays larger than this many elements are reduced in chunks
CHUNK_ELEMENTS = 1 << 23

_LIPSCHITZ1 = {Op.NEG, Op.ABS, Op.COPY, Op.RELU}
#: global Lipschitz constants (max |f'|, rounded up) of bounded-slope functions
_LIPSCHITZ = {
    Op.TANH: 1.0,
    Op.SIGMOID: 0.25,
    Op.ERF: 1.1284,  # 2/sqrt(pi)
    Op.ATAN: 1.0,
    Op.GELU: GELU_LIPSCHITZ,
    Op.GELU_TANH: GELU_LIPSCHITZ,
    Op.SILU: GELU_LIPSCHITZ,
}
_GROWS_UP = {Op.EXP, Op.EXP2, Op.EXPM1}
_GROWS_DOWN = {Op.LOG, Op.LOG2, Op.LOG1P, Op.SQRT}
_CORRECTLY_ROUNDED = {Op.SQRT, Op.RECIPROCAL, Op.SQUARE}
# lower end of each op's domain (inclusive flag): leaving it makes the bound infinite
_DOMAIN_LO = {Op.LOG: (0.0, False), Op.LOG2: (0.0, False), Op.LOG1P: (-1.0, False)}
_DOMAIN_LO.update({Op.SQRT: (0.0, True), Op.RSQRT: (0.0, False)})


def gamma(k: int | np.ndarray, u: float) -> Any:
    """γ_K = K·u / (1 - K·u); infinite when K·u >= 1."""
    ku = np.asarray(k, dtype=np.float64) * u
    with np.errstate(divide="ignore"):
        return np.where(ku < 1, ku / np.maximum(1 - ku, 1e-300), np.inf)


# --------------------------------------------------------------------------- values


@dataclass
class Val:
    """An evaluated expression, broadcastable over the current frame."""

    v: np.ndarray
    dtype: str
    e: Any = 0.0  # error bound (analysis mode); for bool values: > 0 where it may flip
    m: Any = 0.0  # magnitude (analysis mode)
    oob: np.ndarray | None = None  # True where an out-of-bounds read fed the value
    k: int = 0  # longest reduction length feeding the value
    acc: str | None = None  # accumulation dtype of that reduction
    #: a min/max over candidates (analysis mode): the extremum and the runner-up, and the gap
    #: between them (see :mod:`cuda2nki.ir.extremum`)
    top2: Any = None
    gap: Any = None


@dataclass
class Analysis:
    """Result of :func:`analyse`, per output tensor."""

    values: dict[str, np.ndarray]  # float64 oracle
    bound: dict[str, np.ndarray]  # e: |one implementation - exact| <= e
    magnitude: dict[str, np.ndarray]
    reduction_length: dict[str, int]
    acc_dtype: dict[str, str | None]


@dataclass
class _Frame:
    """Iteration variables: arrays right-aligned in a frame of ``rank`` dims."""

    vars: dict[str, np.ndarray] = field(default_factory=dict)
    dims: dict[str, int] = field(default_factory=dict)  # var -> negative dim index
    extents: dict[int, int] = field(default_factory=dict)  # negative dim -> extent
    rank: int = 0

    def extend(self, axes: list[tuple[str, int]]) -> _Frame:
        f = _Frame(dict(self.vars), dict(self.dims), dict(self.extents), self.rank + len(axes))
        for j, (name, ext) in enumerate(axes):
            d = -(f.rank - j)
            shape = [1] * f.rank
            shape[j] = ext
            f.vars[name] = np.arange(ext, dtype=np.int64).reshape(shape)
            f.dims[name] = d
            f.extents[d] = ext
        return f

    def with_var(self, name: str, arr: np.ndarray) -> _Frame:
        f = _Frame(dict(self.vars), dict(self.dims), dict(self.extents), self.rank)
        f.vars[name] = arr
        d = f.dims[name]
        f.extents[d] = arr.shape[self.rank + d]
        return f


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


class _Evaluator:
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

    def _rounding_on_store(self, decl: n.TensorDecl, c: n.Compute, absv: Any) -> Any:
        if is_float(decl.dtype) and dtype_of(c.expr, self.types) != decl.dtype:
            return unit_roundoff(decl.dtype) * absv
        return 0.0

    def _store_bound(self, name, decl, c, val, sl, shape) -> None:
        absv = np.abs(np.broadcast_to(val.v, shape)).astype(np.float64, copy=False)
        e = np.broadcast_to(val.e, shape) + self._rounding_on_store(decl, c, absv)
        e = overflow.guard(e, absv, decl.dtype)
        whole = shape == self.arrays[name].shape
        for store, x in ((self.errs, e), (self.mags, np.broadcast_to(val.m, shape))):
            if whole:
                store[name] = x
                continue
            cur = store[name]
            full = np.array(np.broadcast_to(cur, self.arrays[name].shape), dtype=np.float64)
            full[sl] = x
            store[name] = full
        self._note_k(name, val)

    def _store_bound_scatter(self, name, decl, c, val, idx, shape, mask) -> None:
        tshape = self.arrays[name].shape
        absv = np.abs(np.broadcast_to(val.v, shape)[mask]).astype(np.float64, copy=False)
        e = np.broadcast_to(val.e, shape)[mask] + self._rounding_on_store(decl, c, absv)
        e = overflow.guard(e, absv, decl.dtype)
        m = np.broadcast_to(val.m, shape)[mask]
        errs = np.array(np.broadcast_to(self.errs[name], tshape), dtype=np.float64)
        mags = np.array(np.broadcast_to(self.mags[name], tshape), dtype=np.float64)
        if c.accumulate is None:
            errs[idx], mags[idx] = e, m
        elif c.accumulate is Op.ADD:
            cnt = np.zeros(tshape)
            np.add.at(cnt, idx, 1.0)
            s_abs, s_e = np.zeros(tshape), np.zeros(tshape)
            np.add.at(s_abs, idx, absv)
            np.add.at(s_e, idx, e)
            np.add.at(mags, idx, m)
            u = self.uacc(decl.dtype)
            old = np.abs(self.arrays[name]).astype(np.float64, copy=False)
            errs = errs + s_e + gamma(cnt + 1, u) * np.where(cnt > 0, old + s_abs, 0.0)
            errs = np.where(np.isnan(errs), np.inf, errs)
            errs = overflow.guard(errs, old + s_abs, decl.dtype)
        elif c.accumulate in (Op.MAX, Op.MIN):
            np.maximum.at(errs, idx, e)
            np.maximum.at(mags, idx, m)
        else:
            touched = np.zeros(tshape, bool)
            touched[idx] = True
            errs = np.where(touched & (errs + np.zeros(tshape) > 0), np.inf, errs)
        self.errs[name], self.mags[name] = errs, mags
        self._note_k(name, val)

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

    def _extremum_gap(self, e: n.Binary, a: Val, b: Val) -> Any:
        """The runner-up gap of ``op(literal, extremum)`` (the loop's starting value)."""
        for lit, x, val in ((e.a, b, a), (e.b, a, b)):
            if isinstance(lit, n.Lit) and x.gap is not None and not np.any(val.e):
                return argext.with_literal(e.op, x.v, x.gap, val.v)
        return None

    def _own_extremum(self, e: n.Binary, frame: _Frame, a: Val, b: Val, flip: Any) -> Any:
        """``d(j) == M`` with ``M`` the extremum of the candidates ``d(l)`` over all of ``j``'s
        range flips only at a near tie (see :mod:`cuda2nki.ir.extremum`)."""
        for side, val, other in ((e.b, b, e.a), (e.a, a, e.b)):
            red = argext.extremum_of(side)
            if red is None or val.gap is None:
                continue
            v = argext.candidate_var(other, red)
            if v is None or v not in frame.dims:
                continue
            whole = self.size(red.axes[0].extent, frame, red.loc)
            var = frame.vars[v]
            if np.ndim(whole) or var.size != int(whole) or _start(var) != 0:
                continue
            near = np.asarray(val.gap) <= np.asarray(a.e) + np.asarray(b.e)
            return np.where(near, flip, 0.0)
        return flip

    def _addend_slack(self, e: n.Binary, a: Val, b: Val) -> Any:
        """A value added to a sum may have been its starting value (CUDA accumulates into the
        output element: ``c *= beta; for k: c += ...``): every term was then added to it, and
        the sum's rounding covers ``|value|`` as well, in any association of the two."""
        for side, val, other in ((e.a, a, b), (e.b, b, a)):
            while isinstance(side, n.Cast):
                side = side.x
            if isinstance(side, n.Reduce) and side.op is Op.ADD and val.k > 0:
                u = self.uacc(val.acc or val.dtype)
                return gamma(val.k + 1, u) * np.abs(np.asarray(other.v, np.float64))
        return 0.0

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
        step = max(1, CHUNK_ELEMENTS // max(rest, 1))
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

    def _reduce_error(self, op: Op, sums: tuple, count: int, acc: str) -> Any:
        u = self.uacc(acc)
        if op is Op.ADD:
            s_e, s_abs = sums
            return s_e + gamma(count, u) * s_abs + u * tiny(acc) * count
        if op is Op.MUL:
            hi, lo = sums
            return hi - lo + gamma(count, u) * hi
        return sums[0]

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

    def _scan_bound(self, e: n.Scan, body: Val, full, dim, acc) -> tuple[Any, Any]:
        ev = np.broadcast_to(np.asarray(body.e, np.float64), full)
        mg = np.broadcast_to(np.asarray(body.m, np.float64), full)
        av = np.abs(np.broadcast_to(np.asarray(body.v, np.float64), full))
        u = self.uacc(acc)
        shape = [1] * len(full)
        shape[dim] = full[dim]
        cnt = np.arange(1, full[dim] + 1, dtype=np.float64).reshape(shape)
        if e.op is Op.ADD:
            err = np.cumsum(ev, axis=dim) + gamma(cnt, u) * np.cumsum(av, axis=dim)
            mag = np.cumsum(mg, axis=dim)
        elif e.op in (Op.MAX, Op.MIN):
            err, mag = np.maximum.accumulate(ev, axis=dim), np.maximum.accumulate(mg, axis=dim)
        elif e.op is Op.MUL:
            hi = np.cumprod(av + ev, axis=dim)
            err = hi - np.cumprod(av, axis=dim) + gamma(cnt, u) * hi
            mag = np.cumprod(mg, axis=dim)
        else:
            err = np.where(np.maximum.accumulate(ev, axis=dim) > 0, np.inf, 0.0)
            mag = np.maximum.accumulate(mg, axis=dim)
        if e.exclusive:
            err, mag = _shift(err, dim, 0.0), _shift(mag, dim, 0.0)
        return err, mag

    # ------------------------------------------------------------------ bound rules
    def _unary_bound(self, op: Op, x: Val, v: np.ndarray, rd: str) -> tuple[Any, Any]:
        u = unit_roundoff(rd)
        xv = np.asarray(x.v, np.float64)
        ex = np.asarray(x.e, np.float64)
        absv = np.abs(np.asarray(v, np.float64))
        if op.info.kind in ("logical", "bitwise"):
            return np.where(ex > 0, 1.0 if op.info.kind == "logical" else np.inf, 0.0), absv
        if op in _LIPSCHITZ1:
            prop = ex
        elif op is Op.SQUARE:
            prop = (2 * np.abs(xv) + ex) * ex
        elif op in (Op.SIN, Op.COS):
            prop = ex + 2 * u * np.abs(xv)
        elif op in _LIPSCHITZ:
            prop = _LIPSCHITZ[op] * ex
        else:
            prop = self._interval(op, xv, ex, np.asarray(v, np.float64))
        rnd: Any = 0.0
        if is_float(rd) and op not in _LIPSCHITZ1 and op.info.kind != "round":
            trans = op.info.transcendental and op not in _CORRECTLY_ROUNDED
            ulps = TRANSCENDENTAL_ULPS if trans else 0.5
            rnd = 2 * ulps * u * (absv + tiny(rd))
        return _clean(prop + rnd), absv

    def _interval(self, op: Op, xv: np.ndarray, ex: np.ndarray, c: np.ndarray) -> np.ndarray:
        """max |f(x') - f(x)| over ``|x' - x| <= ex`` for a monotone ``f`` (``c = f(x)``)."""
        f = num.UNARY[op]
        if not np.any(ex > 0):
            return np.zeros_like(xv)
        lo, hi = xv - ex, xv + ex
        if op in _GROWS_UP:  # convex increasing: the upper end moves most
            d = np.abs(f(hi) - c)
        elif op in _GROWS_DOWN:  # concave increasing: the lower end moves most
            d = np.abs(f(lo) - c)
        elif op in (Op.RECIPROCAL, Op.RSQRT):  # steepest towards zero
            d = np.abs(f(xv - np.sign(xv) * ex) - c)
        else:
            d = np.maximum(np.abs(f(lo) - c), np.abs(f(hi) - c))
        if op in _DOMAIN_LO:
            bound, inclusive = _DOMAIN_LO[op]
            bad = (lo < bound) if inclusive else (lo <= bound)
            d = np.where(bad & (ex > 0), np.inf, d)
        if op in (Op.RECIPROCAL, Op.RSQRT):
            d = np.where((np.abs(xv) <= ex) & (ex > 0), np.inf, d)
        if op is Op.TAN:
            period = np.floor((lo + np.pi / 2) / np.pi) != np.floor((hi + np.pi / 2) / np.pi)
            d = np.where(period, np.inf, d)
        return d

    def _binary_bound(self, op: Op, a: Val, b: Val, v: np.ndarray, rd: str) -> tuple[Any, Any]:
        u = unit_roundoff(rd)
        av, bv = np.asarray(a.v, np.float64), np.asarray(b.v, np.float64)
        ea, eb = np.asarray(a.e, np.float64), np.asarray(b.e, np.float64)
        absv = np.abs(np.asarray(v, np.float64))
        kind = op.info.kind
        rnd = u * (absv + tiny(rd)) if is_float(rd) else 0.0
        if kind == "compare":
            flip = (np.abs(av - bv) <= ea + eb) & (ea + eb > 0)
            return flip.astype(np.float64, copy=False), absv
        if kind == "logical":
            return np.where((ea > 0) | (eb > 0), 1.0, 0.0), absv
        if kind == "bitwise" or not is_float(rd):
            return np.where((ea > 0) | (eb > 0), np.inf, 0.0), absv
        if op in (Op.ADD, Op.SUB):
            return _clean(ea + eb + rnd), np.asarray(a.m) + np.asarray(b.m)
        if op is Op.MUL:
            e = np.abs(av) * eb + np.abs(bv) * ea + ea * eb + rnd
            return _clean(e), np.asarray(a.m) * np.asarray(b.m)
        if op is Op.DIV:
            den = np.abs(bv) - eb
            with np.errstate(all="ignore"):
                e = np.where(den > 0, (ea + absv * eb) / np.where(den > 0, den, 1.0), np.inf)
            return _clean(e + rnd), absv
        if op in (Op.MAX, Op.MIN):
            return np.maximum(ea, eb), np.maximum(a.m, b.m)
        if op is Op.MOD:
            return np.where((ea > 0) | (eb > 0), np.abs(bv) + eb, 0.0) + rnd, absv
        # pow, atan2: image of the corners of the box
        f = num.BINARY[op]
        c = f(av, bv)
        d = np.zeros(np.broadcast(av, bv).shape)
        for sa in (-1, 1):
            for sb in (-1, 1):
                d = np.maximum(d, np.abs(f(av + sa * ea, bv + sb * eb) - c))
        ulps = TRANSCENDENTAL_ULPS if op.info.transcendental else 0.5
        return _clean(d + 2 * ulps * u * (absv + tiny(rd))), absv


# --------------------------------------------------------------------------- helpers


def _text(e: Any) -> str:
    from cuda2nki.ir.printer import to_text

    return to_text(e)


def _merge(op: Op, a: Any, b: Any) -> Any:
    """Merge one ingredient of two chunks' reduction bounds (sums add, products multiply)."""
    if op is Op.ADD:
        return a + b
    if op is Op.MUL:
        return a * b
    return np.maximum(a, b)


def _start(var: np.ndarray) -> int:
    return int(var.flat[0]) if var.size else 0


def _var_key(frame: _Frame, name: str) -> tuple:
    """What a frame variable's values are: a run of consecutive integers along one dim."""
    var = frame.vars[name]
    d = frame.dims[name]
    return name, d, _start(var), frame.extents[d]


def _free_vars(node: Any) -> frozenset[str] | None:
    """Names a node reads that it does not bind (axis variables, scalars), or None when its value
    may vary over every frame variable: a scan spans the whole frame, and the value of a
    ``carry`` of an enclosing iteration is shaped by that iteration's frame."""
    out: set[str] = set()
    return frozenset(out) if _collect_free(node, out) else None


def _collect_free(node: Any, out: set[str]) -> bool:
    """Add the free names of ``node`` to ``out``; False if it depends on the whole frame."""
    if node is None or isinstance(node, (str, int, float, bool, Op, SourceLoc)):
        return True
    if isinstance(node, tuple):
        return all(_collect_free(x, out) for x in node)
    if isinstance(node, (n.Scan, n.Carry)):
        return False
    if isinstance(node, n.Sym):
        out.add(node.name)
        return True
    if isinstance(node, n.Param):
        out.add(node.name)
        return True
    if isinstance(node, n.Reduce):
        inner: set[str] = set()
        ok = _collect_free((node.body, node.where), inner)
        out.update(inner - {a.name for a in node.axes})
        return ok and _collect_free(tuple(a.extent for a in node.axes), out)
    if isinstance(node, n.Iterate):
        return _collect_iterate(node, out)
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return True
    return all(_collect_free(getattr(node, f), out) for f in fields if f != "loc")


def _collect_iterate(it: n.Iterate, out: set[str]) -> bool:
    """An iteration's free names; the ``carry`` of its own variables is bound by it."""
    if not _collect_free((it.init, it.trips, it.enter), out):
        return False
    own = set(it.names)
    stack: list[Any] = [it.update, it.cond]
    while stack:
        x = stack.pop()
        if isinstance(x, n.Carry) and x.name in own:
            continue
        if isinstance(x, tuple):
            stack.extend(x)
        elif isinstance(x, (n.Unary, n.Binary, n.Select, n.Cast, n.Bitcast)):
            stack.extend(getattr(x, f) for f in x.__dataclass_fields__ if f != "loc")
        elif not _collect_free(x, out):
            return False
    return True


def _chunkable(c: n.Compute) -> bool:
    axes = c.domain.axes
    if not axes or axes[0].kind is not AxisKind.PARALLEL:
        return False
    return not _mentions(c.expr, c.target.tensor) and not _mentions(c.domain.guard, c.target.tensor)


def _mentions(node: Any, tensor: str) -> bool:
    """True if ``node`` reads ``tensor`` or contains a scan (either forbids slab evaluation)."""
    if node is None:
        return False
    if isinstance(node, n.Scan) or (isinstance(node, n.Read) and node.tensor == tensor):
        return True
    if isinstance(node, tuple):
        return any(_mentions(x, tensor) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return False
    return any(_mentions(getattr(node, f), tensor) for f in fields if f != "loc")


def _or(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return np.logical_or(a, b)


def _and(a: Any, b: Any) -> Any:
    return None if a is None else np.logical_and(a, b)


def _inexact(a: Any, b: Any) -> Any:
    return np.maximum(np.asarray(a, np.float64), np.asarray(b, np.float64))


def _clean(e: Any) -> Any:
    e = np.asarray(e, np.float64)
    return np.where(np.isnan(e), np.inf, e)


def _squeeze(x: np.ndarray, letters: str, exts: list[int]) -> tuple[np.ndarray, str]:
    """Drop the broadcast (size-1 where the frame is larger) dims of ``x`` and their letters."""
    keep = [d for d in range(x.ndim) if not (x.shape[d] == 1 and exts[d] != 1)]
    sq = x.reshape([x.shape[d] for d in keep])
    return sq, "".join(letters[d] for d in keep)


def _pad(x: np.ndarray, rank: int) -> np.ndarray:
    return x.reshape((1,) * (rank - x.ndim) + x.shape) if x.ndim < rank else x


def _bcast_lead(x: np.ndarray, lead: tuple, rank: int) -> np.ndarray:
    """``x`` padded to ``rank`` dims with its leading ``len(lead)`` dims broadcast to ``lead``."""
    x = _pad(np.asarray(x), rank)
    m = len(lead)
    return np.broadcast_to(x, tuple(lead) + x.shape[m:])


def _reduce_oob(oob: Any, m: int, rank: int, mask: Any) -> Any:
    if oob is None:
        return None
    o = _pad(np.asarray(oob), rank)
    if mask is not None:
        o = np.logical_and(o, mask)
    return np.any(o, axis=tuple(range(m)))


def _shift(v: np.ndarray, dim: int, fill: Any) -> np.ndarray:
    out = np.empty_like(v)
    src = [slice(None)] * v.ndim
    dst = [slice(None)] * v.ndim
    src[dim], dst[dim] = slice(0, -1), slice(1, None)
    out[tuple(dst)] = v[tuple(src)]
    first = [slice(None)] * v.ndim
    first[dim] = slice(0, 1)
    out[tuple(first)] = fill
    return out


_ = (AxisKind, math)  # re-exported names used in docs
