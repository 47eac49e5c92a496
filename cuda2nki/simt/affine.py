"""Affine integer values over the thread coordinates of a chunk (the fast path for indices).

``blockIdx.x * blockDim.x + threadIdx.x`` is, over a chunk's box of threads, an affine function of
the six coordinates ``(bz, by, bx, tz, ty, tx)``.  Keeping it symbolic (:class:`Aff`) lets
comparisons such as ``i < n`` be decided from the value range without touching every thread, and
lets loads and stores through affine addresses become strided NumPy views instead of gathers.
An ``Aff`` only exists while all threads of the chunk are active (``act is None``); anything that
needs the per-thread values calls :func:`mat` (or NumPy calls ``__array__``).
"""

from __future__ import annotations

import numpy as np

from cuda2nki.frontend.ast import ScalarType
from cuda2nki.simt import numeric
from cuda2nki.simt.numeric import DTYPES

_LIMITS = {}
for _n, _dt in DTYPES.builtin_items():  # the integers (never imports ml_dtypes)
    if _dt.kind in "iu":
        _ii = np.iinfo(_dt)
        _LIMITS[_n] = (int(_ii.min), int(_ii.max))


class Aff:
    """``c0 + sum(co[k] * coord[k])`` for the chunk's six coordinate axes, of C type ``ty``."""

    __slots__ = ("chunk", "c0", "co", "ty", "starts", "shape", "_mat")

    def __init__(self, chunk, c0: int, co: tuple[int, ...], ty: ScalarType, dom=None):
        """``dom``: the box of threads the value is defined over (default: the whole chunk)."""
        self.chunk = chunk
        self.c0 = int(c0)
        self.co = co
        self.ty = ty
        if dom is None:
            self.starts, self.shape = chunk.starts, chunk.shape6
        else:
            self.starts, self.shape = dom
        self._mat: np.ndarray | None = None

    def on(self, box) -> Aff:
        """The same function of the coordinates, over the threads of ``box``."""
        return Aff(self.chunk, self.c0, self.co, self.ty, (box.starts, box.shape))

    # ------------------------------------------------------------------ geometry
    def base(self) -> int:
        """The value at the box origin."""
        return self.c0 + sum(k * s for k, s in zip(self.co, self.starts))

    def range(self) -> tuple[int, int]:
        b = self.base()
        lo = hi = b
        for k, n in zip(self.co, self.shape):
            d = k * (n - 1)
            if d < 0:
                lo += d
            else:
                hi += d
        return lo, hi

    def fits(self, ty: ScalarType) -> bool:
        lim = _LIMITS.get(ty.name)
        if lim is None:
            return False
        lo, hi = self.range()
        return lim[0] <= lo and hi <= lim[1]

    # ------------------------------------------------------------------ materialisation
    def values(self) -> np.ndarray:
        """Per-thread values (length T), in the type ``ty`` (wrapping as C does)."""
        if self._mat is None:
            r = np.int64(self.base())
            for ax, (k, n) in enumerate(zip(self.co, self.shape)):
                if k and n > 1:
                    sh = [1] * 6
                    sh[ax] = n
                    r = r + (np.arange(n, dtype=np.int64) * k).reshape(sh)
            full = np.broadcast_to(r, self.shape).reshape(-1)
            dt = DTYPES[self.ty.name]
            self._mat = full.astype(dt) if full.dtype != dt else np.ascontiguousarray(full)
        return self._mat

    def at(self, act: np.ndarray) -> np.ndarray:
        """Values at the threads ``act`` (an index array)."""
        c = self.chunk
        r = np.full(len(act), self.c0, dtype=np.int64)
        coords = (c.bid[2], c.bid[1], c.bid[0], c.tid[2], c.tid[1], c.tid[0])
        for k, arr in zip(self.co, coords):
            if k:
                r += arr[act].astype(np.int64) * k
        dt = DTYPES[self.ty.name]
        return r.astype(dt)

    def __array__(self, dtype=None, copy=None):
        v = self.values()
        return v if dtype is None else v.astype(dtype)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Aff({self.c0} + {self.co} : {self.ty.name})"

    # ------------------------------------------------------------------ algebra
    def with_(self, c0: int, co: tuple[int, ...], ty: ScalarType | None = None) -> Aff:
        return Aff(self.chunk, c0, co, ty or self.ty, (self.starts, self.shape))


def mat(v):
    """Materialise an :class:`Aff` to its per-thread array; other values pass through."""
    return v.values() if isinstance(v, Aff) else v


def _int_of(v) -> int | None:
    if isinstance(v, np.integer | int) and not isinstance(v, bool | np.bool_):
        return int(v)
    return None


def combine(op: str, a, b, ty: ScalarType):
    """``a op b`` if it stays affine and in range of ``ty``; else ``None``."""
    ia, ib = isinstance(a, Aff), isinstance(b, Aff)
    if op == "+" or op == "-":
        s = 1 if op == "+" else -1
        if ia and ib:
            if a.shape != b.shape or a.starts != b.starts:
                return None
            r = a.with_(a.c0 + s * b.c0, tuple(x + s * y for x, y in zip(a.co, b.co)), ty)
        elif ia and _int_of(b) is not None:
            r = a.with_(a.c0 + s * _int_of(b), a.co, ty)
        elif ib and _int_of(a) is not None:
            r = b.with_(_int_of(a) + s * b.c0, tuple(s * y for y in b.co), ty)
        else:
            return None
    elif op == "*":
        if ia and _int_of(b) is not None:
            k, x = _int_of(b), a
        elif ib and _int_of(a) is not None:
            k, x = _int_of(a), b
        else:
            return None
        r = x.with_(x.c0 * k, tuple(y * k for y in x.co), ty)
    elif op == "<<" and ia and _int_of(b) is not None and 0 <= _int_of(b) < 32:
        k = 1 << _int_of(b)
        r = a.with_(a.c0 * k, tuple(y * k for y in a.co), ty)
    else:
        return None
    return r if r.fits(ty) else None


def decide(op: str, a, b):
    """A comparison decided for every thread from the value range (np.bool_), or ``None``."""
    if isinstance(a, Aff) and _int_of(b) is not None:
        lo, hi = a.range()
        s = _int_of(b)
        flip = False
    elif isinstance(b, Aff) and _int_of(a) is not None:
        lo, hi = b.range()
        s = _int_of(a)
        flip = True
    else:
        return None
    if flip:  # s op x  <=>  x op' s
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
    if op == "<":
        r = True if hi < s else False if lo >= s else None
    elif op == "<=":
        r = True if hi <= s else False if lo > s else None
    elif op == ">":
        r = True if lo > s else False if hi <= s else None
    elif op == ">=":
        r = True if lo >= s else False if hi < s else None
    elif op == "==":
        r = True if lo == hi == s else False if s < lo or s > hi else None
    else:
        r = False if lo == hi == s else True if s < lo or s > hi else None
    return None if r is None else np.bool_(r)


def add_offsets(a, b):
    """Byte-offset addition for pointers (int64, no wrap), keeping affinity where possible."""
    if isinstance(a, Aff) or isinstance(b, Aff):
        i64 = ScalarType(name="int64")
        r = combine("+", a, b, i64)
        if r is not None:
            return r
        return np.add(np.asarray(mat(a), np.int64), np.asarray(mat(b), np.int64))
    return a + b


def scale(i, size: int):
    """``i * size`` as an int64 offset (Aff kept affine)."""
    if isinstance(i, Aff):
        return i.with_(i.c0 * size, tuple(k * size for k in i.co), ScalarType(name="int64"))
    if isinstance(i, np.ndarray):
        return i.astype(np.int64) * size
    return np.int64(int(i) * size)


# --------------------------------------------------------------------------- Aff-aware C operations


def arith(op: str, a, b, ct: ScalarType):
    if (isinstance(a, Aff) or isinstance(b, Aff)) and not ct.is_float:
        r = combine(op, a, b, ct)
        if r is not None:
            return r
        a, b = mat(a), mat(b)
    return numeric.arith(op, a, b, ct)


def compare(op: str, a, b):
    if isinstance(a, Aff) or isinstance(b, Aff):
        r = decide(op, a, b)
        if r is not None:
            return r
        a, b = mat(a), mat(b)
    return numeric.compare(op, a, b)


def convert(v, src, dst):
    if isinstance(v, Aff):
        if isinstance(dst, ScalarType) and dst.name in _LIMITS:
            if v.ty.name == dst.name:
                return v
            if v.fits(dst):
                return v.with_(v.c0, v.co, dst)
        v = v.values()
    return numeric.convert(v, src, dst)


def truthy(v):
    if isinstance(v, Aff):
        r = decide("!=", v, np.int64(0))
        if r is not None:
            return r
        v = v.values()
    return numeric.truthy(v)
