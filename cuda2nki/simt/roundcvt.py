"""Conversion intrinsics with a rounding mode: ``__<from>2<to>_<rn|rz|rd|ru>``.

The whole family that CUDA defines between ``float``/``double`` and ``int``/``uint``/``ll``/``ull``
and from ``double`` to ``float``, each rounded as its suffix says:

- to an integer: the value rounded (``rint``, ``trunc``, ``floor``, ``ceil``), then saturated
  at the type's limits, NaN to 0 (``cvt.<mode>i.sat``);
- to a float: the nearest value of the target type, moved one step toward ``-inf`` (``rd``),
  ``+inf`` (``ru``) or zero (``rz``) where it lies on the wrong side of the exact value.  The
  comparison is exact: 64-bit integers are compared as integers, never through ``float64``."""

from __future__ import annotations

import numpy as np

from cuda2nki.simt.affine import Aff
from cuda2nki.simt.intrinsics import F32, F64, I32, I64, TABLE, U32, U64, _args, _arity, _reg
from cuda2nki.simt.numeric import convert, np_dtype

#: CUDA's short names of the types in the intrinsics' names
FLOATS = {"float": F32, "double": F64}
INTS = {"int": I32, "uint": U32, "ll": I64, "ull": U64}
MODES = ("rn", "rz", "rd", "ru")
_ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def _values(x: object) -> np.ndarray:
    return np.asarray(x.values() if isinstance(x, Aff) else x)


def _to_int(src, dst, mode: str):
    def build(fc, e):
        _arity(e, 1)
        (f0,), _ = _args(fc, e, [src])

        def run(c, a):
            x = _values(f0(c, a)).astype(np.float64)
            return convert(_ROUND[mode](x), F64, dst)

        return run, dst

    return build


def _beyond(f: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the float ``f`` (the nearest to ``x``) lies above and below the exact ``x``."""
    if x.dtype.kind in "iu":  # an integer: compare as integers (f is integral or infinite)
        lim = float(np.iinfo(x.dtype).max) + 1.0  # 2**(bits-1) or 2**bits, exact
        f64 = f.astype(np.float64)
        big = f64 >= lim
        fi = np.where(big, 0.0, f64).astype(x.dtype)
        above = big | ((fi > x) & ~big)
        below = ~big & (fi < x)
        return above, below
    f64, x64 = f.astype(np.float64), x.astype(np.float64)
    return f64 > x64, f64 < x64


def round_to_float(x: np.ndarray, dt: np.dtype, mode: str) -> np.ndarray:
    """``x`` (integers or float64) converted to the float type ``dt``, rounded by ``mode``."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.asarray(x.astype(dt))
        if mode == "rn":
            return f
        above, below = _beyond(f, x)
    if mode == "rd":
        step, toward = above, -np.inf
    elif mode == "ru":
        step, toward = below, np.inf
    else:  # rz: the side away from zero
        neg = x < 0
        step, toward = np.where(neg, below, above), np.where(neg, np.inf, -np.inf)
    return np.where(step, np.nextafter(f, np.asarray(toward, dt)), f).astype(dt)


def _to_float(src, dst, mode: str):
    dt = np_dtype(dst)

    def build(fc, e):
        _arity(e, 1)
        (f0,), _ = _args(fc, e, [src])

        def run(c, a):
            x = _values(f0(c, a))
            got = round_to_float(np.asarray(x, np_dtype(src)), dt, mode)
            return got if np.ndim(x) else got[()]

        return run, dst

    return build


def register() -> None:
    """Every conversion of the family, replacing the round-to-nearest stand-ins."""
    for fname, fty in FLOATS.items():
        for iname, ity in INTS.items():
            for mode in MODES:
                _reg(f"__{fname}2{iname}_{mode}", _to_int(fty, ity, mode))
                if fname == "double" and iname in ("int", "uint"):
                    if mode == "rn":  # exact: CUDA defines only _rn
                        _reg(f"__{iname}2double_rn", _to_float(ity, F64, "rn"))
                    continue
                _reg(f"__{iname}2{fname}_{mode}", _to_float(ity, fty, mode))
    for mode in MODES:
        _reg(f"__double2float_{mode}", _to_float(F64, F32, mode))


def names() -> list[str]:
    """The names of the family (all registered in the intrinsics table)."""
    prefixes = tuple(f"__{f}2{i}_" for f in FLOATS for i in INTS)
    prefixes += tuple(f"__{i}2{f}_" for f in FLOATS for i in INTS) + ("__double2float_",)
    return sorted(n for n in TABLE if n.startswith(prefixes))


register()
