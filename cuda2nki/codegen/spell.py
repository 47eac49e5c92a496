"""Spelling of IR fragments as Python/NKI source text, shared by both targets (no templates here:
these are expression-level strings the instruction macros receive)."""

from __future__ import annotations

import keyword
import re

from cuda2nki.ir.nodes import (
    Add,
    CeilDiv,
    Const,
    FloorDiv,
    Lit,
    Max,
    Min,
    Mod,
    Mul,
    Param,
    SizeExpr,
    Sub,
    Sym,
)
from cuda2nki.ir.ops import OP_INFO, Op

RESERVED = frozenset({"nki", "nl", "nisa", "np", "min", "max", "range"})

_PREC = {Add: 1, Sub: 1, Mul: 2, FloorDiv: 2, Mod: 2}


def py_name(name: str) -> str:
    """A CUDA identifier as a Python one: keywords and our module names get a trailing ``_``; a
    template instance's name (``block_sum<256, float32>``) becomes ``block_sum_256_float32``."""
    if not name.isidentifier():
        name = re.sub(r"\W+", "_", name).strip("_") or "kernel"
        if name[0].isdigit():
            name = "k_" + name
    if keyword.iskeyword(name) or name in RESERVED:
        return name + "_"
    return name


def size(
    e: SizeExpr,
    names: dict[str, str] | None = None,
    prec: int = 0,
    bound: dict[SizeExpr, str] | None = None,
) -> str:
    """Python spelling of a size; ``bound`` maps subexpressions already named in the port."""
    names = names or {}
    if bound and e in bound:
        return bound[e]
    if isinstance(e, Const):
        return str(e.value) if e.value >= 0 or prec == 0 else f"({e.value})"
    if isinstance(e, Sym):
        return names.get(e.name, py_name(e.name))
    if isinstance(e, Min | Max):
        fn = "min" if isinstance(e, Min) else "max"
        return f"{fn}({size(e.a, names, 0, bound)}, {size(e.b, names, 0, bound)})"
    if isinstance(e, CeilDiv):
        if isinstance(e.b, Const) and e.b.value == 1:
            return size(e.a, names, prec, bound)
        if isinstance(e.b, Const) and e.b.value > 1:
            return _wrap(
                f"({size(e.a, names, 1, bound)} + {e.b.value - 1}) // {e.b.value}", 2, prec
            )
        a, b = size(e.a, names, 1, bound), size(e.b, names, 2, bound)
        return _wrap(f"({a} + {b} - 1) // {size(e.b, names, 3, bound)}", 2, prec)
    sym = {Add: "+", Sub: "-", Mul: "*", FloorDiv: "//", Mod: "%"}.get(type(e))
    if sym is None:
        raise ValueError(f"cannot spell size {e!r}")
    p = _PREC[type(e)]
    left = size(e.a, names, p, bound)
    right = size(
        e.b, names, p + 1, bound
    )  # left-associative: parenthesise an equal-precedence right side
    return _wrap(f"{left} {sym} {right}", p, prec)


def _wrap(text: str, p: int, prec: int) -> str:
    return f"({text})" if p < prec else text


def dtype(name: str) -> str:
    return "nl.uint8" if name == "bool" else f"nl.{name}"


def op(o: Op) -> str:
    if o == Op.DIV:
        return "nl.divide"
    info = OP_INFO[o]
    if info.nki is None:
        raise ValueError(f"no NKI spelling for {o.value}")
    return f"nl.{info.nki}"


def immediate(x: Lit | Param, names: dict[str, str] | None = None) -> str:
    if isinstance(x, Param):
        return (names or {}).get(x.name, py_name(x.name))
    if isinstance(x.value, bool):
        return "1" if x.value else "0"
    if isinstance(x.value, float):
        if x.value != x.value:
            return 'float("nan")'
        if x.value in (float("inf"), float("-inf")):
            return 'float("inf")' if x.value > 0 else 'float("-inf")'
        return repr(float(x.value))
    return str(x.value)


#: exact 32-bit integer instructions: the shared helper (templates/int32_common.py.j2) of each op
_INT_CALLS = {
    Op.ADD: "_c2n_add32({a}, {b})",
    Op.SUB: "_c2n_sub32({a}, {b})",
    Op.MUL: "_c2n_mul32({a}, {b})",
    Op.DIV: "_c2n_{sign}divmod({a}, {b})[0]",
    Op.MOD: "_c2n_{sign}divmod({a}, {b})[1]",
    Op.SHR: "_c2n_shr({a}, {b}, {unsigned})",
    Op.MAX: '_c2n_where(_c2n_cmp32({a}, {b}, "greater", {unsigned}), {a}, {b}, {dtype})',
    Op.MIN: '_c2n_where(_c2n_cmp32({a}, {b}, "less", {unsigned}), {a}, {b}, {dtype})',
}


def int_call(s, a: str, b: str, out: str) -> str:  # noqa: ANN001  (an IntArith)
    """The helper call computing an exact integer instruction with operands ``a``, ``b``, its
    result converted to the destination's dtype ``out`` (keeping the bit pattern)."""
    fmt = {"a": a, "b": b, "unsigned": str(s.unsigned), "sign": "u" if s.unsigned else "s"}
    fmt["dtype"] = dtype(out)
    if s.op.info.kind == "compare":
        return f'_c2n_cmp32({a}, {b}, "{s.op.info.nki}", {s.unsigned})'
    if s.op.info.kind == "bitwise" and s.op != Op.SHR:
        return f"nl.{s.op.info.nki}({a}, {b}, dtype={fmt['dtype']})"
    call = _INT_CALLS[s.op].format(**fmt)
    if s.op in (Op.MAX, Op.MIN) or out == "int32":
        return call
    return f"_c2n_cast({call}, {fmt['dtype']})"
