"""``__dp2a_lo(a, b, c)`` / ``__dp2a_hi``: ``c`` plus the two-way dot product of the 16-bit
halves of ``a`` with two bytes of ``b`` (its low two bytes for ``_lo``, its high two for
``_hi``), signed for ``int`` operands and unsigned for ``unsigned int``, wrapping in 32 bits.
(``__dp4a``, the four-way byte product, is in :mod:`cuda2nki.simt.intrinsics`.)"""

from __future__ import annotations

import numpy as np

from cuda2nki.simt.intrinsics import I32, U32, _args, _reg
from cuda2nki.simt.numeric import np_dtype


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


_reg("__dp2a_lo", _dp2a(False))
_reg("__dp2a_hi", _dp2a(True))
