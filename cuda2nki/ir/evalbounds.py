"""The error bound of the intent-layer evaluator (:mod:`cuda2nki.ir.evaluate`).

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

from typing import Any

import numpy as np

from cuda2nki.ir import extremum as argext
from cuda2nki.ir import nodes as n
from cuda2nki.ir import numerics as num
from cuda2nki.ir import overflow
from cuda2nki.ir.evalvalues import (
    Val,
    _clean,
    _Frame,
    _shift,
    _start,
)
from cuda2nki.ir.ops import Op, is_float
from cuda2nki.ir.types import (
    dtype_of,
    tiny,
    unit_roundoff,
)

#: allowed error of transcendental functions, in ulps (CUDA's single-precision math functions are
#: within 1-4 ulp; NKI's ScalarE activation accuracy is unspecified: a ruling, change deliberately)
TRANSCENDENTAL_ULPS = 4
#: max |d/dx| of gelu (1.129) and silu (1.0998), rounded up
GELU_LIPSCHITZ = 1.13

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


class BoundRules:
    """The error-bound rules of :class:`cuda2nki.ir.evaluate._Evaluator` (a mixin: it reads the
    evaluator's state, ``self.analysis``, ``self.uacc`` ...)."""

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

    def _reduce_error(self, op: Op, sums: tuple, count: int, acc: str) -> Any:
        u = self.uacc(acc)
        if op is Op.ADD:
            s_e, s_abs = sums
            return s_e + gamma(count, u) * s_abs + u * tiny(acc) * count
        if op is Op.MUL:
            hi, lo = sums
            return hi - lo + gamma(count, u) * hi
        return sums[0]

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
