"""The cuRAND device API in the interpreter: ``curand_init``, ``curand``, ``curand_uniform``...

A state is a vector of 32-bit words (see :mod:`cuda2nki.frontend.libtypes`) reached through the
call's pointer argument; each call loads the active threads' states, runs the generator on all
of them at once (:mod:`cuda2nki.simt.curand_gen`) and stores them back.  Which generator runs
follows the state's type, as the library's overloads do.
"""

from __future__ import annotations

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.libtypes import PHILOX, SOBOL32, XORWOW, rng_state
from cuda2nki.simt import curand_gen as G
from cuda2nki.simt import mathfns
from cuda2nki.simt.intrinsics import F32, F64, U32, U64, VOID, _arity, _out_lv, _reg, _unq
from cuda2nki.simt.memory import Vec

_DIRS = A.VectorType(name="curandDirectionVectors32", base=U32, width=32, align=4)


def _unsupported(loc, what: str):
    from cuda2nki.simt.compiler import unsupported

    return unsupported(loc, what)


def _state_lv(fc, e: A.Call, arg: A.Expr):
    """The state the call updates, and its generator type."""
    lv = _out_lv(fc, arg)
    st = rng_state(_unq(lv.ty))
    if st is None:
        raise _unsupported(arg.loc, f"'{e.func}' on a state that is not a cuRAND generator state")
    return lv, st


def _load(lv, st: A.VectorType, c, a, *like) -> list[np.ndarray]:
    v = lv.load(c, a)
    if not isinstance(v, Vec) or len(v.lanes) != st.width:
        raise _unsupported(getattr(lv, "loc", None), f"a {st.name} state that holds another type")
    return G.words(v.lanes, st.width, *like)


def _store(lv, w: list[np.ndarray], c, a) -> None:
    lv.store(c, a, Vec(tuple(_out(x, np.dtype(np.uint32)) for x in w)))


def _out(x, dt):
    x = np.asarray(x, dt)
    return x if x.ndim else dt.type(x)


def _draw(w: list[np.ndarray], st: A.VectorType) -> np.ndarray:
    if st is XORWOW:
        return G.xorwow_next(w)
    if st is PHILOX:
        return G.philox_next(w)
    return G.sobol_next(w)


def _init(fc, e: A.Call):
    """``curand_init(seed, subsequence, offset, &s)``; Sobol32: ``curand_init(dirs, offset, &s)``."""
    _arity(e, 3, 4)
    lv, st = _state_lv(fc, e, e.args[-1])
    if st is SOBOL32:
        if len(e.args) != 3:
            raise _unsupported(e.loc, "'curand_init' of a Sobol32 state with 4 arguments")
        dirs = fc.rvalue(e.args[0])
        off = fc.rvalue(e.args[1], U64)

        def run_sobol(c, a):
            from cuda2nki.simt import access

            d = access.load(c, a, dirs(c, a), _DIRS, e.loc)
            _store(lv, G.sobol_init(list(d.lanes), np.asarray(off(c, a), np.uint64)), c, a)
            return a

        return run_sobol, VOID
    if len(e.args) != 4:
        raise _unsupported(e.loc, f"'curand_init' of a {st.name} state with 3 arguments")
    fs = [fc.rvalue(x, U64) for x in e.args[:3]]
    make = G.xorwow_init if st is XORWOW else G.philox_init

    def run(c, a):
        vals = [np.asarray(f(c, a), np.uint64) for f in fs]
        _store(lv, make(*vals), c, a)
        return a

    return run, VOID


def _skip(fc, e: A.Call):
    """``skipahead(n, &s)`` / ``skipahead_sequence(n, &s)``."""
    _arity(e, 2)
    lv, st = _state_lv(fc, e, e.args[1])
    n = fc.rvalue(e.args[0], U64)
    seq = e.func == "skipahead_sequence"
    if seq and st is SOBOL32:
        raise _unsupported(e.loc, "'skipahead_sequence' of a Sobol32 state")

    def run(c, a):
        k = np.asarray(n(c, a), np.uint64)
        w = _load(lv, st, c, a, k)
        if st is XORWOW:
            G.xorwow_skipahead(w, k, seq)
        elif st is PHILOX:
            G.philox_skipahead(w, k, seq)
        else:
            G.sobol_skipahead(w, k)
        _store(lv, w, c, a)
        return a

    return run, VOID


def _drawing(convert, rt, draws: int = 1):
    """A call that takes ``draws`` 32-bit draws and converts them to its result."""

    def build(fc, e: A.Call):
        _arity(e, 1)
        lv, st = _state_lv(fc, e, e.args[0])
        dt = np.dtype(np.uint32) if rt == U32 else np.dtype(np.float32 if rt == F32 else np.float64)

        def run(c, a):
            w = _load(lv, st, c, a)
            xs = [_draw(w, st) for _ in range(draws if st is not SOBOL32 else 1)]
            _store(lv, w, c, a)
            return _out(convert(*xs), dt)

        return run, rt

    return build


def _fast_sincos(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sin_m = mathfns.MATH[mathfns.FAST["__sinf"]]
    cos_m = mathfns.MATH[mathfns.FAST["__cosf"]]
    dt = np.dtype(np.float32)
    return mathfns.compute(sin_m, [v], dt), mathfns.compute(cos_m, [v], dt)


def _logf(u: np.ndarray) -> np.ndarray:
    return mathfns.compute(mathfns.MATH["log"], [np.asarray(u, np.float32)], np.dtype(np.float32))


def _pair(x, y):
    return G.box_muller(x, y, _logf, _fast_sincos)


def _erfcinvf(x: np.ndarray) -> np.ndarray:
    m = mathfns.MATH["erfcinv"]
    return mathfns.compute(m, [np.asarray(x, np.float32)], np.dtype(np.float32))


def _log(u: np.ndarray) -> np.ndarray:
    return mathfns.compute(mathfns.MATH["log"], [np.asarray(u, np.float64)], np.dtype(np.float64))


def _sincospi(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(v, np.float64)
    return np.sin(np.pi * v), np.cos(np.pi * v)


def _pair_double(w: list[np.ndarray], st: A.VectorType):
    if st is PHILOX:
        return G.box_muller_double(*G.philox_next4(w), _log, _sincospi)
    draws = [_draw(w, st) for _ in range(4)]
    return G.box_muller_double(*draws, _log, _sincospi)


def _normal(fc, e: A.Call):
    """``curand_normal`` / ``curand_normal_double``: one value of a Box-Muller pair, the other
    kept in the state for the next call (Sobol32: the inverse-CDF form of one draw)."""
    _arity(e, 1)
    lv, st = _state_lv(fc, e, e.args[0])
    wide = e.func == "curand_normal_double"
    if st is SOBOL32:
        if wide:
            raise _unsupported(e.loc, "'curand_normal_double' of a Sobol32 state")
        return _drawing(lambda x: G.normal_icdf(x, _erfcinvf), F32)(fc, e)
    if st is XORWOW:
        flag, extra = (G.XW_FLAG_D, G.XW_EXTRA_D) if wide else (G.XW_FLAG, G.XW_EXTRA)
    else:
        flag, extra = (G.PH_FLAG_D, G.PH_EXTRA_D) if wide else (G.PH_FLAG, G.PH_EXTRA)
    dt = np.dtype(np.float64 if wide else np.float32)

    def kept_value(w):
        if wide:
            return np.array(G.words_f64(w[extra], w[extra + 1]))
        return np.array(G.bits_f32(w[extra]))

    def keep(w, value, where) -> None:
        parts = G.f64_words(value) if wide else (G.f32_bits(value),)
        for i, p in enumerate(parts):
            w[extra + i] = np.where(where, p, w[extra + i]).astype(np.uint32)

    def run(c, a):
        w = _load(lv, st, c, a)
        kept = w[flag] == 1
        fresh = ~kept
        out = kept_value(w)
        if fresh.any():
            sub = [x[fresh] if x.ndim else x for x in w]
            first, second = _pair_double(sub, st) if wide else _pair(_draw(sub, st), _draw(sub, st))
            for i, x in enumerate(sub):
                if w[i].ndim:
                    w[i][fresh] = x
                else:
                    w[i] = np.asarray(x, np.uint32)
            full_first = np.zeros(fresh.shape, dt)
            full_second = np.zeros(fresh.shape, dt)
            if fresh.ndim:
                full_first[fresh], full_second[fresh] = first, second
            else:
                full_first, full_second = np.asarray(first, dt), np.asarray(second, dt)
            out = np.where(fresh, full_first, out).astype(dt)
            keep(w, full_second, fresh)
        w[flag] = np.where(kept, np.uint32(0), np.uint32(1)).astype(np.uint32)
        _store(lv, w, c, a)
        return _out(out, dt)

    return run, F64 if wide else F32


def _vec4(kind: str):
    """``curand4`` / ``curand_uniform4`` / ``curand_normal4`` / ``curand_normal2``."""

    def build(fc, e: A.Call):
        _arity(e, 1)
        lv, st = _state_lv(fc, e, e.args[0])
        if kind != "normal2" and st is not PHILOX:
            raise _unsupported(e.loc, f"'{e.func}' of a {st.name} state (Philox4_32_10 only)")
        if kind == "normal2" and st is SOBOL32:
            raise _unsupported(e.loc, "'curand_normal2' of a Sobol32 state")
        rt = e.ty

        def run(c, a):
            w = _load(lv, st, c, a)
            if kind == "normal2":
                lanes = list(_pair(_draw(w, st), _draw(w, st)))
            else:
                r = G.philox_next4(w)
                if kind == "raw":
                    lanes = r
                elif kind == "uniform":
                    lanes = [G.uniform(x) for x in r]
                else:
                    lanes = [*_pair(r[0], r[1]), *_pair(r[2], r[3])]
            _store(lv, w, c, a)
            dt = np.dtype(np.uint32 if kind == "raw" else np.float32)
            return Vec(tuple(_out(x, dt) for x in lanes))

        return run, rt

    return build


_NORMAL_NOTE = (
    "Box-Muller of two draws through logf and __sincosf: the draws are bit-exact, the transform "
    "matches a GPU to a few ulp"
)
_reg(
    "curand_init",
    _init,
    "exact",
    "XORWOW (skip-ahead by GF(2) matrix powers), Philox4_32_10, Sobol32",
)
_reg(
    "skipahead skipahead_sequence", _skip, "exact", "cuRAND states: XORWOW, Philox4_32_10, Sobol32"
)
_reg("curand", _drawing(lambda x: x, U32), "exact", "one 32-bit draw of the state's generator")
_reg("curand_uniform", _drawing(G.uniform, F32), "exact", "x * 2^-32 + 2^-33 in float")
_reg(
    "curand_uniform_double",
    _drawing(
        lambda x, y=None: G.uniform_double32(x) if y is None else G.uniform_double(x, y), F64, 2
    ),
    "exact",
    "two draws joined into 53 bits (Sobol32: one draw)",
)
_reg("curand_normal", _normal, "ideal", _NORMAL_NOTE + " (Sobol32: inverse CDF, erfcinvf)")
_reg(
    "curand_normal_double",
    _normal,
    "ideal",
    "Box-Muller of four draws (53-bit uniforms) through log and sincospi: the draws are "
    "bit-exact, the transform matches a GPU to a few ulp",
)
_reg("curand_normal2", _vec4("normal2"), "ideal", _NORMAL_NOTE)
_reg("curand4", _vec4("raw"), "exact", "four draws of a Philox4_32_10 state")
_reg("curand_uniform4", _vec4("uniform"), "exact", "four uniform floats of a Philox4_32_10 state")
_reg("curand_normal4", _vec4("normal"), "ideal", _NORMAL_NOTE)
