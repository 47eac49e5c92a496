"""C type names, usual arithmetic conversions and literal typing for the front end."""

from __future__ import annotations

import math
import re
import struct

from cuda2nki.frontend.ast import ArrayType, CType, PointerType, ScalarType, VectorType
from cuda2nki.frontend.libtypes import LIBRARY_TYPES

# Canonical scalar instances (types are frozen dataclasses, so sharing is safe).
S = {
    n: ScalarType(name=n)
    for n in (
        "void",
        "bool",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
    )
}
VOID, BOOL, INT, UINT = S["void"], S["bool"], S["int32"], S["uint32"]
LONG, ULONG, FLOAT, DOUBLE = S["int64"], S["uint64"], S["float32"], S["float64"]
HALF, BF16 = S["float16"], S["bfloat16"]

# Single-word type names (primitive_type or type_identifier spellings).
NAMED_SCALARS: dict[str, str] = {
    "void": "void",
    "bool": "bool",
    "char": "int8",
    "signed char": "int8",
    "unsigned char": "uint8",
    "short": "int16",
    "unsigned short": "uint16",
    "int": "int32",
    "signed": "int32",
    "unsigned": "uint32",
    "long": "int64",
    "unsigned long": "uint64",
    "long long": "int64",
    "unsigned long long": "uint64",
    "float": "float32",
    "double": "float64",
    "long double": "float64",
    "size_t": "uint64",
    "ssize_t": "int64",
    "ptrdiff_t": "int64",
    "intptr_t": "int64",
    "uintptr_t": "uint64",
    "clock_t": "int64",  # long on the LP64 hosts nvcc targets; clock() is its 32-bit counter
    "int8_t": "int8",
    "uint8_t": "uint8",
    "int16_t": "int16",
    "uint16_t": "uint16",
    "int32_t": "int32",
    "uint32_t": "uint32",
    "int64_t": "int64",
    "uint64_t": "uint64",
    "half": "float16",
    "__half": "float16",
    "__nv_half": "float16",
    "__nv_bfloat16": "bfloat16",
    "nv_bfloat16": "bfloat16",
    "__bfloat16": "bfloat16",
    "bfloat16": "bfloat16",
    "uchar": "uint8",
    "ushort": "uint16",
    "uint": "uint32",
    "ulong": "uint64",
}

_VEC_BASES = {
    "char": "int8",
    "uchar": "uint8",
    "short": "int16",
    "ushort": "uint16",
    "int": "int32",
    "uint": "uint32",
    "long": "int64",
    "ulong": "uint64",
    "longlong": "int64",
    "ulonglong": "uint64",
    "float": "float32",
    "double": "float64",
}
VECTOR_TYPES: dict[str, VectorType] = {}
for _b, _s in _VEC_BASES.items():
    for _w in (1, 2, 3, 4):
        VECTOR_TYPES[f"{_b}{_w}"] = VectorType(name=f"{_b}{_w}", base=S[_s], width=_w)
for _n, _s in (
    ("half2", "float16"),
    ("__half2", "float16"),
    ("__nv_bfloat162", "bfloat16"),
    ("nv_bfloat162", "bfloat16"),
    ("__nv_half2", "float16"),
):
    VECTOR_TYPES[_n] = VectorType(name=_n, base=S[_s], width=2)

LANES = {"x": 0, "y": 1, "z": 2, "w": 3}
_CONST_SCALARS = {name: ScalarType(name=name, const=True) for name in S}


# one-token type names (a scalar name wins over a vector name): what named_type looks up
NAMED_TYPES: dict[str, CType] = {
    **LIBRARY_TYPES,
    **VECTOR_TYPES,
    **{name: S[scalar] for name, scalar in NAMED_SCALARS.items()},
}


def named_type(name: str) -> CType | None:
    """The CType for a one-token type name (``float``, ``size_t``, ``float4``...), else None."""
    return NAMED_TYPES.get(name)


def with_const(t: CType, const: bool = True) -> CType:
    if not const or isinstance(t, ArrayType):
        return t
    if getattr(t, "const", False) == const:
        return t
    if type(t) is ScalarType:  # the common case, without rebuilding the dataclass
        return _CONST_SCALARS[t.name]
    return type(t)(**{**t.__dict__, "const": const})


def unqualified(t: CType | None) -> CType | None:
    if t is None or isinstance(t, ArrayType) or not t.const:
        return t
    if type(t) is ScalarType:
        return S[t.name]
    return type(t)(**{**t.__dict__, "const": False})


def is_arith(t: CType | None) -> bool:
    return isinstance(t, ScalarType) and t.name != "void"


INT_NAMES = frozenset(
    ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
)


def is_int(t: CType | None) -> bool:
    return type(t) is ScalarType and t.name in INT_NAMES


_RANK = {
    "bool": 0,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 3,
    "uint32": 3,
    "int64": 4,
    "uint64": 4,
}


_PROMOTED = {
    n: (
        INT
        if n in ("bool", "int8", "uint8", "int16", "uint16")
        else FLOAT
        if n in ("float16", "bfloat16")
        else S[n]
    )
    for n in S
}
# usual arithmetic conversion of two scalar types, by name (filled on first use)
ARITH_BY_NAME: dict[tuple[str, str], ScalarType] = {}


def promote(t: CType | None) -> CType | None:
    """Integer promotion; half/bfloat16 promote to float (their arithmetic runs in fp32)."""
    if type(t) is ScalarType:
        return _PROMOTED.get(t.name, t)
    return unqualified(t)


def arith_result(a: CType | None, b: CType | None) -> CType | None:
    """C usual arithmetic conversions (with half/bf16 computed as float)."""
    if type(a) is ScalarType and type(b) is ScalarType:
        key = (a.name, b.name)
        got = ARITH_BY_NAME.get(key)
        if got is None:
            got = _arith(_PROMOTED.get(a.name, a), _PROMOTED.get(b.name, b))
            ARITH_BY_NAME[key] = got
        return got
    a, b = promote(a), promote(b)
    return a if isinstance(a, ScalarType) else b if isinstance(b, ScalarType) else a


def _arith(a: ScalarType, b: ScalarType) -> ScalarType:
    if a.name == "float64" or b.name == "float64":
        return DOUBLE
    if a.name == "float32" or b.name == "float32":
        return FLOAT
    if a.name == b.name:
        return a
    ra, rb = _RANK[a.name], _RANK[b.name]
    sa, sb = a.is_signed, b.is_signed
    if sa == sb:
        return a if ra >= rb else b
    u, s = (a, b) if not sa else (b, a)
    if _RANK[u.name] >= _RANK[s.name]:
        return u
    if s.bits > u.bits:
        return s
    return S["u" + s.name]


_INT_LIMIT = {"int32": 2**31, "uint32": 2**32, "int64": 2**63, "uint64": 2**64}
_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|0[0-7']*|[1-9][0-9']*)([uUlL]*)$")


def int_literal(text: str) -> tuple[int, ScalarType] | None:
    """Value and C type of an integer literal (``16``, ``0xffffffff``, ``3u``, ``5ll``)."""
    if text.isdigit() and (text[0] != "0" or len(text) == 1):  # plain decimal: the common case
        v = int(text)
        if v < 2**31:
            return v, INT
        return (v, LONG) if v < 2**63 else (v & (2**64 - 1), ULONG)
    m = _INT_RE.match(text)
    if not m:
        return None
    digits, suffix = m.group(1).replace("'", ""), m.group(2).lower()
    if digits[:2] in ("0x", "0X"):
        value, decimal = int(digits, 16), False
    elif digits[:2] in ("0b", "0B"):
        value, decimal = int(digits, 2), False
    elif len(digits) > 1 and digits[0] == "0":
        value, decimal = int(digits, 8), False
    else:
        value, decimal = int(digits), True
    unsigned = "u" in suffix
    longs = suffix.count("l")
    if unsigned:
        cands = ["uint32", "uint64"] if longs == 0 else ["uint64"]
    elif decimal:
        cands = ["int32", "int64"] if longs == 0 else ["int64"]
    else:
        cands = ["int32", "uint32", "int64", "uint64"] if longs == 0 else ["int64", "uint64"]
    for c in cands:
        if value < _INT_LIMIT[c]:
            return value, S[c]
    return value & ((1 << 64) - 1), ULONG


_FLOAT_RE = re.compile(
    r"^((?:[0-9']*\.[0-9']*|[0-9']+)(?:[eE][+-]?[0-9]+)?|0[xX][0-9a-fA-F.]+[pP][+-]?[0-9]+)([fFlL]?)$"
)


def float_literal(text: str) -> tuple[float, ScalarType] | None:
    m = _FLOAT_RE.match(text)
    if not m or m.group(1) in (".", ""):
        return None
    body = m.group(1).replace("'", "")
    try:
        value = float.fromhex(body) if body[:2] in ("0x", "0X") else float(body)
    except ValueError:
        return None
    if m.group(2) in ("f", "F"):
        return to_float32(value), FLOAT
    return value, DOUBLE


def to_float32(value: float) -> float:
    """Round a Python float to the nearest float32 (overflow to +-inf, as C does)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        # beyond FLT_MAX: values that still round to FLT_MAX do so, the rest are infinite
        if abs(value) < FLT_MAX_ROUNDING_EDGE:
            return math.copysign(FLT_MAX, value)
        return math.copysign(math.inf, value)


FLT_MAX = 3.4028234663852886e38
FLT_MIN = 1.1754943508222875e-38
FLT_EPSILON = 1.1920928955078125e-07
# halfway between FLT_MAX and the next (unrepresentable) float32 step: 2^128 - 2^103
FLT_MAX_ROUNDING_EDGE = 2.0**128 - 2.0**103


def sizeof(t: CType | None) -> int | None:
    if isinstance(t, ScalarType):
        return max(t.bits // 8, 1) if t.name != "void" else 1
    if isinstance(t, VectorType):
        return (t.base.bits // 8) * t.width
    if isinstance(t, PointerType):
        return 8
    if isinstance(t, ArrayType):
        n = sizeof(t.elem)
        if n is None or any(d is None for d in t.dims):
            return None
        for d in t.dims:
            n *= d
        return n
    return None


def type_str(t: CType | None) -> str:
    """C-like spelling used by dumps and messages: ``const float32*``, ``float32[16][17]``."""
    if t is None:
        return "?"
    if isinstance(t, ScalarType):
        return ("const " if t.const else "") + t.name
    if isinstance(t, VectorType):
        return ("const " if t.const else "") + t.name
    if isinstance(t, PointerType):
        q = "".join((" const" if t.const else "", " __restrict__" if t.restrict else ""))
        return f"{type_str(t.pointee)}*{q}"
    if isinstance(t, ArrayType):
        return type_str(t.elem) + "".join(f"[{'' if d is None else d}]" for d in t.dims)
    name = getattr(t, "name", None)
    return str(name) if name else repr(t)
