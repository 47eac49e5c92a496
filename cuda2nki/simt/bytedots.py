"""``__dp2a_lo(a, b, c)`` / ``__dp2a_hi``: ``c`` plus the two-way dot product of the 16-bit
halves of ``a`` with two bytes of ``b`` (its low two bytes for ``_lo``, its high two for
``_hi``), signed for ``int`` operands and unsigned for ``unsigned int``, wrapping in 32 bits.
(``__dp4a``, the four-way byte product, is in :mod:`cuda2nki.simt.intrinsics`.)

The vector overloads (``__dp4a(char4, char4, int)``, ``uchar4``; ``__dp2a_lo(short2, char4,
int)``, ``ushort2``/``uchar4``) take the fields from the lanes."""

from __future__ import annotations

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.simt.intrinsics import I32, TABLE, U32, _args, _reg
from cuda2nki.simt.numeric import np_dtype

#: dot product -> (lane of a, lane of b) of each term, for the vector overloads
_PAIRS = {
    "__dp4a": ((0, 0), (1, 1), (2, 2), (3, 3)),
    "__dp2a_lo": ((0, 0), (1, 1)),
    "__dp2a_hi": ((0, 2), (1, 3)),
}


def _field(x: np.ndarray, shift: int, bits: int, signed: bool) -> np.ndarray:
    v = (x >> shift) & ((1 << bits) - 1)
    if signed:
        half = 1 << (bits - 1)
        v = (v ^ half) - half
    return v


def _dp2a(high: bool):
    def build(fc, e):
        signed = not str(getattr(fc.type_of(e.args[0]), "name", "")).startswith("uint")
        t = I32 if signed else U32
        fs, _ = _args(fc, e, [t, t, t])
        shift = 16 if high else 0

        def run(c, a):
            x, y, acc = (np.asarray(g(c, a)).astype(np.int64) & 0xFFFFFFFF for g in fs)
            r = acc + _field(x, 0, 16, signed) * _field(y, shift, 8, signed)
            r = r + _field(x, 16, 16, signed) * _field(y, shift + 8, 8, signed)
            out = (r & 0xFFFFFFFF).astype(np.uint32).astype(np_dtype(t))
            return out if out.ndim else out[()]

        return run, t

    return build


def _lanes(scalar):
    """The call's builder: the vector overload where the first operand is a vector, else
    ``scalar`` (the packed-integer form)."""

    def build(fc, e):
        if not isinstance(fc.type_of(e.args[0]), A.VectorType):
            return scalar(fc, e)
        signed = not fc.type_of(e.args[0]).base.name.startswith("uint")
        t = I32 if signed else U32
        va, vb = (fc.rvalue(x) for x in e.args[:2])
        (acc,), _ = _args(fc, A.Call(func=e.func, args=e.args[2:], loc=e.loc, ty=e.ty), [t])

        def run(c, a):
            xa, xb = va(c, a).lanes, vb(c, a).lanes
            r = np.asarray(acc(c, a)).astype(np.int64)
            for i, j in _PAIRS[e.func]:
                r = r + np.asarray(xa[i]).astype(np.int64) * np.asarray(xb[j]).astype(np.int64)
            out = (r & 0xFFFFFFFF).astype(np.uint32).astype(np_dtype(t))
            return out if out.ndim else out[()]

        return run, t

    return build


_reg("__dp2a_lo", _lanes(_dp2a(False)))
_reg("__dp2a_hi", _lanes(_dp2a(True)))
_reg("__dp4a", _lanes(TABLE["__dp4a"].build))
