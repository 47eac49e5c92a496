"""Host values as the evaluator carries them: the :class:`HostExpr` / :class:`HostFacts` it
returns, the internal :class:`_V` (C text, number, dim3 / array items, evidence), the scope a
host expression is read in, and the C arithmetic on values (casts, integer division, rounding,
``ceil_div``), with the nominal device and the byte sizes of C types it assumes."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import tree_sitter as ts

from cuda2nki.frontend.hosttext import joined

Number = int | float

_MAX_DEPTH = 12
#: ``cudaDeviceProp`` fields a host reads to size a grid that fills the GPU, with the values of
#: a nominal small device: a grid-stride kernel computes the same whatever the grid, and a small
#: grid keeps a check fast
NOMINAL_DEVICE = {
    "multiProcessorCount": 2,
    "maxThreadsPerMultiProcessor": 1024,
    "maxBlocksPerMultiProcessor": 4,
    "maxThreadsPerBlock": 1024,
    "warpSize": 32,
}
#: threads per block taken for a launcher's block-size parameter that no call in the file gives
DEFAULT_BLOCK = 128
#: a helper dividing rounding up, by its name: ``ceil_div``, ``iDivUp``, ``intCeilDiv``,
#: ``DIV_ROUND_UP``, ``divideCeil``, ``cdiv`` (case and underscores aside)
_CEIL_DIV_RE = re.compile(
    r"^[a-z]*?(?:ceil(?:ing)?div(?:ide|ision)?|div(?:ide|ision)?(?:round)?(?:up|ceil(?:ing)?)"
    r"|cdiv)(?:int|[0-9]*)$"
)


def _ceil_div_name(name: str) -> bool:
    """Whether a two-argument helper called ``name`` is a rounding-up division."""
    return _CEIL_DIV_RE.match(name.replace("_", "").lower()) is not None


_SIZEOF = {
    "float": 4,
    "double": 8,
    "int": 4,
    "unsigned": 4,
    "half": 2,
    "__half": 2,
    "__nv_bfloat16": 2,
    "nv_bfloat16": 2,
    "char": 1,
    "short": 2,
    "long": 8,
    "size_t": 8,
    "float2": 8,
    "float4": 16,
    "int2": 8,
    "int4": 16,
    "int64_t": 8,
    "int32_t": 4,
    "uint32_t": 4,
    "uint8_t": 1,
    "int8_t": 1,
    "unsigned int": 4,
    "signed int": 4,
    "unsigned char": 1,
    "signed char": 1,
    "unsigned short": 2,
    "short int": 2,
    "unsigned long": 8,
    "long int": 8,
    "long long": 8,
    "long long int": 8,
    "unsigned long long": 8,
    "unsigned long long int": 8,
    "uint16_t": 2,
    "int16_t": 2,
    "uint64_t": 8,
    "bool": 1,
    "float3": 12,
    "int3": 12,
    "double2": 16,
    "uchar4": 4,
}
_FLOAT_TYPES = frozenset({"float", "double", "half", "__half"})
#: calls whose value is never a size a launch could use
_NOT_SIZES = frozenset(
    "rand random drand48 clock time malloc calloc new cudaGetLastError cudaGetErrorString "
    "printf sqrt sqrtf pow powf log logf exp expf".split()
)


@dataclass(frozen=True)
class HostExpr:
    """One host value: ``text`` in kernel parameter names (None: it uses a host value that is not
    a parameter and not constant), ``value`` when constant, and where it came from."""

    text: str | None
    value: Number | None
    evidence: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostFacts:
    """The launch site's grid, block and arguments as host values."""

    grid: tuple[HostExpr, ...]
    block: tuple[HostExpr, ...]
    args: tuple[HostExpr, ...]
    #: the dynamic shared memory bytes (third launch argument), None when not given
    shared: HostExpr | None = None
    #: per argument, the allocation size in bytes of the pointer it passes (None: not a pointer
    #: the host code allocates; see :mod:`cuda2nki.frontend.hostalloc`)
    allocs: tuple[HostExpr | None, ...] = ()
    #: per argument, a struct passed by value: what the host says about each of its members, in
    #: the order the kernel's parameters take them (see :mod:`cuda2nki.frontend.hoststructs`);
    #: None for any other argument
    members: tuple[Any, ...] = ()
    #: per argument, whether the host fills the buffer it passes with zeros right before the
    #: launch (see :mod:`cuda2nki.frontend.hostzero`)
    zeroed: tuple[bool, ...] = ()


class _NoValue(Exception):
    pass


@dataclass(frozen=True)
class _V:
    """An evaluation: C text (in parameter names, or None), number, dim3 / array items."""

    text: str | None
    num: Number | None = None
    items: tuple[_V, ...] | None = None
    ev: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _const(n: Number, ev: tuple[str, ...] = (), notes: tuple[str, ...] = ()) -> _V:
    return _V(_num_text(n), n, None, ev, notes)


def _num_text(n: Number) -> str:
    if isinstance(n, float) and n.is_integer() and abs(n) < 1 << 53:
        return str(int(n))
    return repr(n) if isinstance(n, float) else str(n)


@dataclass
class _Scope:
    fnode: ts.Node | None
    before: int
    argmap: dict[str, int]
    depth: int
    bound: dict[str, _V] | None = None

    def __post_init__(self) -> None:
        if self.bound is None:
            self.bound = {}


# ---------------------------------------------------------------------- arithmetic


def _number(text: str) -> Number:
    t = text.lower().replace("'", "")
    if t.startswith("0x"):
        return int(t.rstrip("ul"), 16)
    if any(c in t for c in ".e") and not t.startswith("0x"):
        return float(t.rstrip("fl"))
    t = t.rstrip("ul")
    if len(t) > 1 and t.startswith("0"):
        return int(t, 8)
    return int(t)


def _is_float_type(ty: str) -> bool:
    return ty.replace("const", "").replace("unsigned", "").strip() in _FLOAT_TYPES


def _round_div(a: _V, b: _V) -> _V:
    """``(int)(a / b + 0.5)`` of integer-valued ``a``, ``b > 0``: the ratio rounded halves up,
    which is ``(2a + b) / (2b)`` in C integer arithmetic (the binding's, and the port's)."""
    if any(v.num is not None and float(v.num) != int(v.num) for v in (a, b)):
        raise _NoValue
    a, b = _cast("int", a), _cast("int", b)
    if b.num is not None and b.num <= 0:
        raise _NoValue
    two = _const(2)
    return _binary("/", _binary("+", _binary("*", two, a), b), _binary("*", two, b))


def _cast(ty: str, v: _V) -> _V:
    if v.items is not None:
        raise _NoValue
    base = ty.replace("const", "").replace("unsigned", "").strip() or "int"
    if base in _FLOAT_TYPES:
        num = None if v.num is None else float(v.num)
        return _V(
            v.text and f"(float){v.text}" if v.num is None else _num_text(num),
            num,
            None,
            v.ev,
            v.notes,
        )
    num = None if v.num is None else int(v.num)
    text = _num_text(num) if num is not None else (_int_of_float(v.text) if v.text else None)
    return _V(text, num, None, v.ev, v.notes)


_FLOAT_LITERAL = re.compile(r"(?<![\w@.])(?:\d+\.\d*|\.\d+|\d+[eE][-+]?\d+)")


def _int_of_float(text: str) -> str:
    """The integer conversion of a host expression: ``(int)((float)n / b)`` truncates like
    ``n / b`` in the binding's C arithmetic, so the float casts just go.  Where a float literal
    takes part (``(int)((float)n * 1.5)``) there is no integer expression of it: no value (the
    rounded ratio ``(int)(n / b + 0.5)`` is restated before this, see ``_round_div``)."""
    plain = _strip_float(text)
    if _FLOAT_LITERAL.search(plain):
        raise _NoValue  # float arithmetic the binding's integer expressions cannot restate
    return plain


def _strip_float(text: str) -> str:
    return text.replace("(float)", "")


def _binary(op: str, a: _V, b: _V) -> _V:
    if a.items is not None or b.items is not None:
        raise _NoValue
    num = None
    if a.num is not None and b.num is not None:
        num = _arith(op, a.num, b.num)
    text = None if a.text is None or b.text is None else joined(a.text, op, b.text)
    if num is not None and not _uses_args(a, b):
        text = _num_text(num)
    return _V(text, num, None, a.ev + b.ev, a.notes + b.notes)


def _uses_args(*vs: _V) -> bool:
    return any(v.text is not None and "@" in v.text for v in vs)


def _arith(op: str, x: Number, y: Number) -> Number:
    from cuda2nki.binding import _c_div, _c_mod

    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        if y == 0:
            raise _NoValue
        return _c_div(x, y)
    if op == "%":
        if y == 0:
            raise _NoValue
        return _c_mod(x, y)
    if op in ("<<", ">>") and isinstance(x, int) and isinstance(y, int):
        if not 0 <= y < 64:  # undefined in C: no value
            raise _NoValue
        return x << y if op == "<<" else x >> y
    cmp = {"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y, "==": x == y, "!=": x != y}
    if op in cmp:
        return int(cmp[op])
    raise _NoValue


def _ceil_div(a: _V, b: _V) -> _V:
    if a.items is not None or b.items is not None:
        raise _NoValue
    num = None
    if a.num is not None and b.num is not None and (b.num <= 0 or a.num < 0):
        raise _NoValue  # `n / d + (n % d != 0)` is a count of d-sized pieces only for d > 0
    if a.num is not None and b.num is not None:
        num = -(-int(a.num) // int(b.num))
    text = None
    if a.text is not None and b.text is not None:
        text = f"ceil_div({_strip_float(a.text)}, {_strip_float(b.text)})"
    if num is not None and not _uses_args(a, b):
        text = str(num)
    return _V(text, num, None, a.ev + b.ev, a.notes + b.notes)


_DIV_RE = re.compile(r"^\(*(.+?)\)* / \(*(.+?)\)*$")


def _rounding(up: bool, v: _V) -> _V:
    if v.items is not None:
        raise _NoValue
    num = None if v.num is None else (math.ceil(v.num) if up else math.floor(v.num))
    text = None
    if v.text is not None:
        if num is not None and not _uses_args(v):
            text = str(num)
        else:
            parts = _split_div(v.text)
            if parts is None:
                return _V(None, num, None, v.ev, v.notes)
            a, b = (_strip_float(p) for p in parts)
            text = f"ceil_div({a}, {b})" if up else f"({a}) / ({b})"
    return _V(text, num, None, v.ev, v.notes)


def _split_div(text: str) -> tuple[str, str] | None:
    """``a / b`` at depth 0 (outer parentheses removed): (a, b)."""
    t = text.strip()
    while t.startswith("(") and _closing(t, 0) == len(t) - 1:
        t = t[1:-1].strip()
    depth = 0
    for i, ch in enumerate(t):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "/" and depth == 0:
            return t[:i].strip(), t[i + 1 :].strip()
    return None


def _closing(t: str, start: int) -> int:
    depth = 0
    for i in range(start, len(t)):
        depth += t[i] == "("
        depth -= t[i] == ")"
        if depth == 0:
            return i
    return -1


def _ev(items: tuple[_V, ...]) -> tuple[str, ...]:
    return tuple(e for i in items for e in i.ev)


def _notes(items: tuple[_V, ...]) -> tuple[str, ...]:
    return tuple(e for i in items for e in i.notes)


def _host_expr(v: _V, outer: _V) -> HostExpr:
    ev = tuple(dict.fromkeys(outer.ev + v.ev))
    notes = tuple(dict.fromkeys(outer.notes + v.notes))
    if v.items is not None:
        return HostExpr(None, None, ev, notes)
    return HostExpr(v.text, v.num, ev, notes)


# ---------------------------------------------------------------------- syntax helpers


def _occupancy(which: int, ev: tuple[str, ...]) -> _V:
    """The block size (``which`` 1) or minimum grid (0) an occupancy query gives on the nominal
    GPU of :data:`NOMINAL_DEVICE`: :data:`DEFAULT_BLOCK` threads, as many blocks as fill it."""
    blocks = NOMINAL_DEVICE["multiProcessorCount"] * (
        NOMINAL_DEVICE["maxThreadsPerMultiProcessor"] // DEFAULT_BLOCK
    )
    value = DEFAULT_BLOCK if which else blocks
    what = "block size" if which else "minimum grid size"
    note = (
        f"the {what} of an occupancy query taken as {value}, for a nominal small GPU "
        "(a grid sized to fill the GPU does not change what the kernel computes)"
    )
    return _const(value, ev, (note,))
