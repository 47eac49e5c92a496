"""Small queries on values, types and names shared by the parts of the literal lowering."""

from __future__ import annotations

import keyword
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import sizeof
from cuda2nki.lift.literal.spelling import _RESERVED
from cuda2nki.lift.literal.values import (
    DynPtr,
    Idx,
    Lin,
    Local,
    Ptr,
    Tile,
    Uni,
    Value,
    add,
    is_int,
    mul,
)

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer


def _is_u32(t: object) -> bool:
    return isinstance(t, A.ScalarType) and t.name == "uint32"


def _operands(node: A.Node) -> tuple[A.Expr | None, A.Expr | None]:
    """The CUDA operands of a binary expression or compound assignment (None where unknown)."""
    if isinstance(node, A.Binary):
        return node.left, node.right
    if isinstance(node, A.Assign):
        return node.target, node.value
    return None, None


def _unsigned(node: A.Node) -> bool:
    """Whether C's usual arithmetic conversions make the operation unsigned 32-bit."""
    return any(x is not None and _is_u32(x.ty) for x in _operands(node)) or _is_u32(
        getattr(node, "ty", None)
    )


def _np_and(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a if b is None else b
    return f"({a} & {b})"


def _kind(v: Value) -> str:
    if isinstance(v, Idx):
        return "int"
    if isinstance(v, Uni | Tile):
        return "float" if v.ty == "float" else "int"
    if isinstance(v, Local | Ptr | DynPtr):
        return v.ty
    return "int"


def _is_scalar(v: Value) -> bool:
    return isinstance(v, Uni) or (isinstance(v, Lin) and v.uniform)


def _is_void(t: object) -> bool:
    return isinstance(t, A.ScalarType) and t.name == "void"


def _prod(xs) -> int:  # noqa: ANN001
    n = 1
    for x in xs:
        n *= int(x)
    return n


def _depth(e: A.Expr) -> int:
    n = 0
    while isinstance(e, A.Index):
        n += 1
        e = e.base
    return n


def _flatten(idx: list[str], dims: tuple[int, ...]) -> str:
    off = "0"
    for k, i in enumerate(idx):
        off = add(off, mul(i, str(_prod(dims[k + 1 :]))))
    return off


def _exact(expr: str, d: int) -> str:
    if is_int(expr):
        return str(int(expr) // d)
    return f"({expr}) // {d}"


def _sizeof(t: object, node: A.Node, low: Lowerer) -> int:
    if isinstance(t, A.ScalarType):
        return max(1, t.bits // 8)
    n = sizeof(t) if isinstance(t, A.ArrayType | A.VectorType) else None
    if n is None:  # an array's bytes: `sizeof(table) / sizeof(table[0])` counts its elements
        raise low.refuse("sizeof of a non-scalar type", node)
    return n


def _elem_class(t: object, node: A.Node, low: Lowerer) -> str:
    if isinstance(t, A.ScalarType):
        if t.name == "float64":
            raise low.refuse("a double-precision buffer (NKI has no fp64 arithmetic)", node)
        return "float" if t.is_float else "int"
    raise low.refuse("a buffer of vector or class type", node)


def _callee(tu: A.TranslationUnit, name: str) -> A.Function | None:
    for f in tu.functions:
        if f.name == name:
            return f
    return None


def _py(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or name in _RESERVED else name


def _int_literal(expr: str) -> int | None:
    """The value of an integer literal spelled as ``expr`` (``32``, ``-4``, ``(0)``), else None."""
    text = expr.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    try:
        return int(text, 10)
    except ValueError:
        return None
