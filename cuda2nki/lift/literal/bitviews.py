"""Bit reinterpretations of 32-bit values in the literal lowering.

``__float_as_int``, ``__float_as_uint``, ``__int_as_float`` and ``__uint_as_float`` (and a
``reinterpret_cast`` between 32-bit scalar types, :func:`scalar_view`, or a read of a local
through a pointer of another 32-bit type, ``*(int*)&f``, :func:`local_word`) read the 32 bits of a
value as the other type, without conversion.  The operand is first converted to the type the
intrinsic takes (C's implicit conversion of its argument); then

* a uniform value is reinterpreted when the kernel is traced (NumPy ``view`` of its 32 bits);
* a per-thread value becomes a tile of the operand type, and the result a copy of its dtype
  view (``t.view(nl.int32)``, NKI's zero-cost reinterpretation): the same bits, read as the
  other type, exactly.

An unsigned result is an int32 tile of the same bit pattern marked unsigned, as every unsigned
per-thread value of the lowering is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.values import Lin, Tile, Uni, Value

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

#: intrinsic -> (operand type, result type)
BIT_VIEWS: dict[str, tuple[str, str]] = {
    "__float_as_int": ("float32", "int32"),
    "__float_as_uint": ("float32", "uint32"),
    "__int_as_float": ("int32", "float32"),
    "__uint_as_float": ("uint32", "float32"),
    "__half_as_short": ("float16", "int16"),
    "__half_as_ushort": ("float16", "uint16"),
    "__short_as_half": ("int16", "float16"),
    "__ushort_as_half": ("uint16", "float16"),
    "__bfloat16_as_ushort": ("bfloat16", "uint16"),
    "__ushort_as_bfloat16": ("uint16", "bfloat16"),
}
_SHORTS = frozenset({"float16", "bfloat16", "int16", "uint16"})

_WORDS = frozenset({"float32", "int32", "uint32"})
_NP = {"float32": "np.float32", "int32": "np.int32", "uint32": "np.uint32"}


def handles(func: str, nargs: int) -> bool:
    return func in BIT_VIEWS and nargs == 1


def bit_call(low: Lowerer, e: A.Call, arg: Value) -> Value:
    """``__float_as_int(x)`` and its kin of the lowered argument ``arg``."""
    src, dst = BIT_VIEWS[e.func]
    return reinterpret(low, arg, src, dst, e)


def scalar_view(source: object, to: object) -> tuple[str, str] | None:
    """(operand type, result type) of a scalar ``reinterpret_cast`` between two 32-bit scalar
    types, None for any other cast."""
    if not isinstance(source, A.ScalarType) or not isinstance(to, A.ScalarType):
        return None
    if source.name not in _WORDS or to.name not in _WORDS:
        return None
    return source.name, to.name


def local_word(e: A.Unary) -> tuple[A.Expr, str, str] | None:
    """``*(int*)&f`` / ``*reinterpret_cast<unsigned*>(&f)`` of a 32-bit scalar ``f``: the value
    read, its type and the type it is read as; None for any other dereference."""
    cast = e.operand
    if e.op != "*" or not isinstance(cast, A.Cast) or not isinstance(cast.to, A.PointerType):
        return None
    addr = cast.operand
    if not (isinstance(addr, A.Unary) and addr.op == "&" and isinstance(addr.operand, A.Name)):
        return None
    words = scalar_view(addr.operand.ty, cast.to.pointee)
    return None if words is None else (addr.operand, *words)


def reinterpret(low: Lowerer, v: Value, src: str, dst: str, node: A.Node) -> Value:
    """The bits of ``v`` (converted to ``src`` first) read as ``dst``."""
    v = low.convert(v, A.ScalarType(name=src), node)
    if isinstance(v, Lin) and v.uniform:
        v = Uni(v.b, "int")
    if src in _SHORTS:
        return _reinterpret16(low, v, src, dst, node)
    kind = "float" if dst == "float32" else "int"
    if isinstance(v, Uni):
        return Uni(_traced(v.expr, src, dst), kind)
    if src == dst:
        return v
    t = low.tile(v, "float" if src == "float32" else "int", node)
    dt = "nl.float32" if dst == "float32" else "nl.int32"
    out = low.fresh("bv")
    low.emit("let", node.loc.line, dst=out, value=f"nl.copy({t}.view({dt}), dtype={dt})")
    return Tile(out, kind, unsigned=dst == "uint32")


def _reinterpret16(low: Lowerer, v: Value, src: str, dst: str, node: A.Node) -> Value:
    """A 16-bit reinterpretation: a bfloat16 value is the upper half of its fp32 word; a half
    value's bits come from (and go to) a float16 copy of the tile."""
    if isinstance(v, Uni):
        return Uni(_traced16(v.expr, src, dst), "float" if dst in _FLOAT16 else "int")
    if src == "bfloat16":
        word = _let(low, f"nl.copy({low.tile(v, 'float', node)}.view(nl.int32), dtype=nl.int32)")
        high = low.op("right_shift", [word, "16"], "int").expr
        return _signed(low, low.op("bitwise_and", [high, "65535"], "int"), dst)
    if dst == "bfloat16":
        low16 = low.op("bitwise_and", [low.tile(v, "int", node), "65535"], "int").expr
        word = low.op("left_shift", [low16, "16"], "int").expr
        return Tile(_let(low, f"nl.copy({word}.view(nl.float32), dtype=nl.float32)"), "float")
    if src == "float16":
        half = f"nl.copy({low.tile(v, 'float', node)}, dtype=nl.float16)"
        return Tile(_let(low, f"nl.copy({half}.view(nl.{dst}), dtype=nl.int32)"), "int")
    bits = f"nl.copy({low.tile(v, 'int', node)}, dtype=nl.{src})"
    return Tile(_let(low, f"nl.copy({bits}.view(nl.float16), dtype=nl.float32)"), "float")


_FLOAT16 = frozenset({"float16", "bfloat16"})


def _let(low: Lowerer, value: str) -> str:
    out = low.fresh("bv")
    low.emit("let", dst=out, value=value)
    return out


def _signed(low: Lowerer, t: Tile, dst: str) -> Tile:
    """The 16-bit pattern ``t`` (0..65535) as ``dst``: sign-extended for ``int16``."""
    if dst != "int16":
        return t
    flipped = low.op("bitwise_xor", [t.expr, "32768"], "int").expr
    return low.op("subtract", [flipped, "32768"], "int")


def _traced16(expr: str, src: str, dst: str) -> str:
    """The trace-time 16-bit reinterpretation of the uniform value spelled ``expr``."""
    if src == "float16":
        word = f"int(np.array(np.float16({expr})).view(np.uint16))"
    elif src == "bfloat16":
        word = f"(int(np.array(np.float32({expr}), dtype=np.float32).view(np.uint32)) >> 16)"
    else:
        word = f"(int({expr}) % 65536)"
    if dst == "float16":
        return f"np.float32(np.array({word}, dtype=np.uint16).view(np.float16))"
    if dst == "bfloat16":
        return f"np.float32(np.array({word} << 16, dtype=np.uint32).view(np.float32))"
    return f"(({word} ^ 32768) - 32768)" if dst == "int16" else word


def short_float(expr: str, to: str) -> str:
    """The uniform fp32 value spelled ``expr`` rounded to ``to`` (``float16`` or ``bfloat16``,
    to nearest even) when traced, as an fp32 value: bfloat16 keeps the upper 16 bits of the
    rounded word; a NaN stays a NaN."""
    x = f"np.float32({expr})"
    if to == "float16":
        return f"np.float32(np.float16({x}))"
    u = f"int(np.array({x}, dtype=np.float32).view(np.uint32))"
    word = f"((({u} + 32767 + (({u} >> 16) & 1)) >> 16 << 16) % 4294967296)"
    rounded = f"np.float32(np.array({word}, dtype=np.uint32).view(np.float32))"
    return f"({x} if np.isnan({x}) else {rounded})"


def _traced(expr: str, src: str, dst: str) -> str:
    """The trace-time reinterpretation of the uniform value spelled ``expr``."""
    if src == "float32":
        word = f"np.array(np.float32({expr}), dtype=np.float32)"
    else:  # an integer: its value modulo 2**32 is the pattern
        word = f"np.array(int({expr}) % 4294967296, dtype=np.uint32)"
    viewed = f"{word}.view({_NP[dst]})"
    return f"np.float32({viewed})" if dst == "float32" else f"int({viewed})"


__all__ = [
    "BIT_VIEWS",
    "bit_call",
    "handles",
    "local_word",
    "reinterpret",
    "scalar_view",
    "short_float",
]
