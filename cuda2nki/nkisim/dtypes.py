"""NKI data types, their NumPy storage, conversions and the legacy type-promotion table.

Storage: every NKI dtype maps to a NumPy dtype (ml_dtypes for bf16/fp8).  ``tfloat32`` is stored as
float32 whose mantissa is rounded (RNE) to 10 bits on every write.  ``bool_`` is stored as uint8.

``ml_dtypes`` takes about a second of CPU to import, so its types are resolved on first use: a
simulation that never meets bf16 or fp8 never imports it (:func:`narrow_loaded` says whether it
has been).  A process that cannot load native code later (the checker's sandbox) imports it up
front with :func:`load_narrow`.

Conversion rules (reference NKI.md section 8.4):
* float -> narrower float: round to nearest even (ml_dtypes); overflow goes to +-inf where the
  format has an infinity.  ``float8_e4m3fn`` has none: ml_dtypes turns an overflow into NaN and we
  keep that (the reference marks this undocumented; the choice is pinned by a test).
* float -> integer: round to nearest even, then saturate to the destination range; NaN -> 0
  (undocumented on hardware; chosen and pinned by a test).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

F32 = np.dtype(np.float32)


def load_narrow() -> Any:
    """The ``ml_dtypes`` module, imported now (its NumPy types are registered from here on)."""
    try:
        import ml_dtypes
    except ImportError as exc:  # e.g. a sandbox that can no longer load native code
        raise ImportError(
            f"bf16/fp8 types are unavailable: ml_dtypes could not be imported ({exc}); the "
            "checker's sandbox loads it only for a port whose text names a bf16 or fp8 type"
        ) from exc
    return ml_dtypes


def narrow_loaded() -> bool:
    """Whether ``ml_dtypes`` is imported: until it is, no array can hold a bf16 or fp8 value."""
    return "ml_dtypes" in sys.modules


def is_bf16(d: np.dtype) -> bool:
    """Whether NumPy dtype ``d`` is ml_dtypes' bfloat16 (never imports it)."""
    return d.kind == "V" and narrow_loaded() and d == bfloat16.np_dtype


def __getattr__(name: str) -> Any:  # ``BF16``: the bfloat16 NumPy dtype, resolved on first use
    if name == "BF16":
        return bfloat16.np_dtype
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def bf16_to_f32(v: np.ndarray) -> np.ndarray:
    """Exact widening of bfloat16 values to float32: the bits shifted into the high half (about
    twice as fast as ``astype``)."""
    out = np.empty(v.shape, np.float32)  # owns its data (deferred matmuls keep it as is)
    np.left_shift(v.view(np.uint16), 16, out=out.view(np.uint32), dtype=np.uint32)
    return out


@dataclass(frozen=True)
class NkiDType:
    """An NKI dtype: its name, its NumPy storage dtype and its size in bytes on the device."""

    name: str
    #: the NumPy storage dtype, or the name of the ``ml_dtypes`` type it is (resolved on first use)
    storage: np.dtype | str
    itemsize: int
    is_float: bool
    is_signed: bool = True
    #: elements per storage word: 4 for the MX ``*_x4`` dtypes (four values in a uint32)
    packed: int = 1

    @property
    def np_dtype(self) -> np.dtype:
        """The NumPy dtype values of this type are stored as."""
        st = self.storage
        if type(st) is str:
            st = np.dtype(getattr(load_narrow(), st))
            object.__setattr__(self, "storage", st)  # a cache: equality and hash use the name
        return st  # type: ignore[return-value]

    # ``nl.float32.min`` and friends: the limits of the format (see :func:`finfo`).
    @property
    def min(self) -> float | int:
        return finfo(self).min

    @property
    def max(self) -> float | int:
        return finfo(self).max

    @property
    def bits(self) -> int:
        return finfo(self).bits

    @property
    def eps(self) -> float:
        return finfo(self).eps

    @property
    def tiny(self) -> float:
        return finfo(self).tiny

    def __repr__(self) -> str:
        return f"nl.{self.name}"

    def __str__(self) -> str:
        return self.name

    # Allow ``np.dtype(nl.bfloat16)`` and numpy functions to accept our dtypes.
    @property
    def dtype(self) -> np.dtype:
        return self.np_dtype

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NkiDType):
            return self.name == other.name
        try:
            return as_dtype(other) is self  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False


def _d(name: str, npd, is_float: bool, signed: bool = True) -> NkiDType:
    npd = np.dtype(npd)
    return NkiDType(name, npd, npd.itemsize, is_float, signed)


def _narrow(name: str, itemsize: int, signed: bool = True) -> NkiDType:
    """A float type stored as ``ml_dtypes``' type of the same name (imported on first use)."""
    return NkiDType(name, name, itemsize, True, signed)


bool_ = _d("bool_", np.uint8, False, False)
int8 = _d("int8", np.int8, False)
int16 = _d("int16", np.int16, False)
int32 = _d("int32", np.int32, False)
uint8 = _d("uint8", np.uint8, False, False)
uint16 = _d("uint16", np.uint16, False, False)
uint32 = _d("uint32", np.uint32, False, False)
float16 = _d("float16", np.float16, True)
bfloat16 = _narrow("bfloat16", 2)
float32 = _d("float32", np.float32, True)
tfloat32 = _d("tfloat32", np.float32, True)
float8_e4m3 = _narrow("float8_e4m3", 1)
float8_e4m3fn = _narrow("float8_e4m3fn", 1)
float8_e5m2 = _narrow("float8_e5m2", 1)
float8_e8m0fnu = _narrow("float8_e8m0fnu", 1, False)
# MX (microscaling) data: four elements packed in one 32-bit word; only moved, never computed on
float8_e4m3fn_x4 = NkiDType("float8_e4m3fn_x4", np.dtype(np.uint32), 4, True, True, 4)
float8_e5m2_x4 = NkiDType("float8_e5m2_x4", np.dtype(np.uint32), 4, True, True, 4)
float4_e2m1fn_x4 = NkiDType("float4_e2m1fn_x4", np.dtype(np.uint32), 4, True, True, 4)
#: the ``ml_dtypes`` type of each packed element
_X4_ELEMENT = {
    "float8_e4m3fn_x4": "float8_e4m3fn",
    "float8_e5m2_x4": "float8_e5m2",
    "float4_e2m1fn_x4": "float4_e2m1fn",
}

ALL: dict[str, NkiDType] = {
    d.name: d
    for d in (
        bool_,
        int8,
        int16,
        int32,
        uint8,
        uint16,
        uint32,
        float16,
        bfloat16,
        float32,
        tfloat32,
        float8_e4m3,
        float8_e4m3fn,
        float8_e5m2,
        float8_e8m0fnu,
        float8_e4m3fn_x4,
        float8_e5m2_x4,
        float4_e2m1fn_x4,
    )
}
ALIASES = {"bool": bool_, "float32r": float32, "fp32": float32, "bf16": bfloat16, "fp16": float16}

_BY_NP: dict[np.dtype, NkiDType] = {}
for _x in ALL.values():
    if _x.name not in ("tfloat32", "bool_") and not isinstance(_x.storage, str):
        _BY_NP.setdefault(_x.np_dtype, _x)
_BY_NP[np.dtype(np.bool_)] = bool_
#: the ``ml_dtypes``-stored types, entered into ``_BY_NP`` once ``ml_dtypes`` is imported
_NARROW = tuple(x for x in ALL.values() if isinstance(x.storage, str))


def _by_np(npd: np.dtype) -> NkiDType | None:
    hit = _BY_NP.get(npd)
    # ml_dtypes' types are of kind "V", but for float8_e5m2, which reads as "f"
    if hit is None and _NARROW and npd.kind in ("V", "f") and narrow_loaded():
        for x in _NARROW:  # a narrow type can only be met once ml_dtypes is imported
            _BY_NP.setdefault(x.np_dtype, x)
        hit = _BY_NP.get(npd)
    return hit


def as_dtype(d: object) -> NkiDType:
    """Map an NKI dtype, a NumPy dtype/type, or a name to an :class:`NkiDType`.

    Raises ``TypeError`` for float64/int64 and anything the device has no equivalent of.
    """
    if isinstance(d, NkiDType):
        return d
    if isinstance(d, str):
        if d in ALL:
            return ALL[d]
        if d in ALIASES:
            return ALIASES[d]
    try:
        npd = np.dtype(d)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"not a dtype: {d!r}") from None
    hit = _by_np(npd)
    if hit is not None:
        return hit
    raise TypeError(f"dtype {npd} has no NKI equivalent")


@dataclass(frozen=True)
class TypeInfo:
    """``nl.finfo(dtype)`` / ``nl.iinfo(dtype)``: the limits of an NKI dtype (as NumPy's)."""

    dtype: NkiDType
    bits: int
    min: float | int
    max: float | int
    eps: float | None = None  # floats only: distance from 1.0 to the next value
    tiny: float | None = None  # floats only: smallest positive normal value

    @property
    def smallest_normal(self) -> float | None:
        return self.tiny


def finfo(d: object) -> TypeInfo:
    """Limits of a float (or, like :func:`iinfo`, an integer) NKI dtype.

    ``tfloat32`` has float32's exponent and a 10-bit mantissa; an ``*_x4`` dtype reports its
    element format (``bits`` is the element's width).
    """
    t = as_dtype(d)
    if t is bool_:
        return TypeInfo(t, 8, 0, 1)
    if not t.is_float:
        return iinfo(t)
    if t is tfloat32:
        top = float((2.0 - 2.0**-10) * 2.0**127)
        return TypeInfo(t, 32, -top, top, 2.0**-10, float(np.finfo(np.float32).tiny))
    if isinstance(t.storage, str) or t.packed > 1:
        ml = load_narrow()
        fi = ml.finfo(getattr(ml, _X4_ELEMENT.get(t.name, t.name)))
    else:
        fi = np.finfo(t.np_dtype)
    return TypeInfo(t, int(fi.bits), float(fi.min), float(fi.max), float(fi.eps), float(fi.tiny))


def iinfo(d: object) -> TypeInfo:
    """Limits of an integer NKI dtype (``TypeError`` for a float dtype, as ``np.iinfo``)."""
    t = as_dtype(d)
    if t is bool_:
        return TypeInfo(t, 8, 0, 1)
    if t.is_float:
        raise TypeError(f"iinfo: {t.name} is not an integer dtype")
    ii = np.iinfo(t.np_dtype)
    return TypeInfo(t, int(ii.bits), int(ii.min), int(ii.max))


def from_numpy(npd: np.dtype, *, allow_wide: bool = True) -> NkiDType:
    """The NKI dtype used for a host array of dtype ``npd`` (float64 -> float32, int64 -> int32)."""
    npd = np.dtype(npd)
    if allow_wide:
        if npd == np.float64:
            return float32
        if npd == np.int64:
            return int32
        if npd == np.uint64:
            return uint32
    return as_dtype(npd)


# --------------------------------------------------------------------------- conversion

_INT_RANGES = {
    n: (float(np.iinfo(d.np_dtype).min), float(np.iinfo(d.np_dtype).max))
    for n, d in ALL.items()
    if not d.is_float
}


def round_tf32(x: np.ndarray) -> np.ndarray:
    """Round float32 values to a 10-bit mantissa (RNE), keeping float32 storage."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    u = x.view(np.uint32)
    finite = np.isfinite(x)
    bias = np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))
    r = ((u + bias) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(finite, r, x)


def convert(values: np.ndarray, dt: NkiDType) -> np.ndarray:
    """Convert computed values (any NumPy dtype) to the storage dtype of ``dt`` with NKI rounding."""
    npd = dt.np_dtype
    if values.dtype == npd and dt is not tfloat32:
        return values
    if dt.packed > 1:
        from cuda2nki.nkisim.errors import unsupported

        raise unsupported(
            f"computing {dt.name} values",
            "MX x4-packed data is moved as raw 32-bit words only; MX arithmetic is not modelled",
        )
    if dt.is_float:
        if dt is tfloat32:
            return round_tf32(values)
        if values.dtype.kind in "iub" and npd.itemsize < 4:
            values = values.astype(np.float32)
        return values.astype(npd)
    # integer destination
    if values.dtype.kind in "iub":
        if values.dtype.itemsize < npd.itemsize or (
            values.dtype.kind == npd.kind and values.dtype.itemsize <= npd.itemsize
        ):
            return values.astype(npd)
        lo, hi = _INT_RANGES[dt.name]
        return np.clip(values, lo, hi).astype(npd)
    v = np.rint(values.astype(np.float64, copy=False) if npd.itemsize >= 4 else values)
    lo, hi = _INT_RANGES[dt.name]
    v = np.nan_to_num(v, nan=0.0, posinf=hi, neginf=lo)
    return np.clip(v, lo, hi).astype(npd)


def to_f32(values: np.ndarray) -> np.ndarray:
    """Widen stored values to float32 for Vector/Scalar-engine arithmetic (no copy if already f32)."""
    if values.dtype == F32:
        return values
    return values.astype(np.float32)


#: Bit pattern of the NaN that poisons fresh float allocations: a quiet NaN whose payload no
#: arithmetic produces, so a checker can tell "never written" from "computed NaN" in fp32 outputs.
CANARY_BITS = 0x7FC0C2E5
CANARY_F32 = np.array(CANARY_BITS, dtype=np.uint32).view(np.float32)[()]


def poison_value(dt: NkiDType):
    """Fill value of fresh allocations: NaN for floats, 4 for integers (reference 8.5)."""
    return CANARY_F32 if dt.is_float else 4


def canary_mask(values: np.ndarray) -> np.ndarray:
    """Elements of an fp32 array still holding the poison canary (never written)."""
    a = np.asarray(values)
    if a.dtype != np.float32:
        return np.zeros(a.shape, dtype=bool)
    return a.view(np.uint32) == CANARY_BITS


# --------------------------------------------------------------------------- legacy promotion

_FLOAT_RANK = {
    "float8_e4m3": 0,
    "float8_e4m3fn": 0,
    "float8_e5m2": 0,
    "float16": 1,
    "bfloat16": 1,
    "tfloat32": 2,
    "float32": 3,
}


def promote(a: NkiDType, b: NkiDType) -> NkiDType:
    """Legacy (beta 1) binary-op type promotion, reference section 8.3."""
    if a == b:
        return a
    if a.is_float and not b.is_float:
        return a
    if b.is_float and not a.is_float:
        return b
    if a.is_float:
        names = {a.name, b.name}
        if names == {"float16", "bfloat16"}:
            return float32
        if names <= {"float8_e4m3", "float8_e4m3fn", "float8_e5m2"}:
            return bfloat16
        return a if _FLOAT_RANK[a.name] >= _FLOAT_RANK[b.name] else b
    # int, int
    if a.name == "bool_":
        return b
    if b.name == "bool_":
        return a
    if a.is_signed == b.is_signed:
        return a if a.itemsize >= b.itemsize else b
    s, u = (a, b) if a.is_signed else (b, a)
    if s.itemsize > u.itemsize:
        return s
    if u.itemsize == 4:
        return float32
    return {1: int16, 2: int32}[u.itemsize]


def weak_scalar_dtype(x: object) -> NkiDType:
    """Legacy: a Python scalar is typed as the widest hardware type of its kind."""
    if isinstance(x, (bool, np.bool_)):
        return uint8
    if isinstance(x, (int, np.integer)) and not isinstance(x, np.generic):
        return int32
    if isinstance(x, np.generic):
        return from_numpy(x.dtype)
    return float32
