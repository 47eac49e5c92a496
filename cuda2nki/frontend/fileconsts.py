"""File-scope constants written with direct initialisation: ``constexpr unsigned n(a * b);``.

At file scope the grammar reads such a line as the declaration of a function ``n`` taking a
parameter of type ``a`` (see :mod:`cuda2nki.frontend.directinit` for the same inside a body).
A ``const``/``constexpr`` scalar declared so, whose "parameters" form an integer or floating
expression over constants already known, is recorded as that constant."""

from __future__ import annotations

import re
from collections.abc import Mapping

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.constfold import convert, fold_binary
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import FLOAT, arith_result, int_literal

_FLOAT_RE = re.compile(r"^(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)[fFlL]?$")
_UNARY = {"-": lambda v: -v, "+": lambda v: v, "~": lambda v: ~int(v), "!": lambda v: int(not v)}

Value = tuple[int | float, A.ScalarType]


def _number(node: ts.Node) -> Value | None:
    lit = int_literal(_text(node))
    if lit is not None:
        return lit
    m = _FLOAT_RE.match(_text(node))
    return (float(m.group(1)), FLOAT) if m else None


def _unary(node: ts.Node, consts: Mapping[str, tuple]) -> Value | None:
    arg, op = node.child_by_field_id(F.argument), node.child_by_field_id(F.operator)
    inner = const_value(arg, consts) if arg is not None else None
    fn = _UNARY.get(_text(op)) if op is not None else None
    if inner is None or fn is None:
        return None
    return convert(fn(inner[0]), inner[1]), inner[1]


def _binary(node: ts.Node, consts: Mapping[str, tuple]) -> Value | None:
    left, right = node.child_by_field_id(F.left), node.child_by_field_id(F.right)
    a = const_value(left, consts) if left is not None else None
    b = const_value(right, consts) if right is not None else None
    op = node.child_by_field_id(F.operator)
    if a is None or b is None or op is None:
        return None
    ty = arith_result(a[1], b[1])
    if not isinstance(ty, A.ScalarType):
        return None
    got = fold_binary(_text(op), a[0], b[0], ty)
    return (got, ty) if got is not None else None


def const_value(node: ts.Node, consts: Mapping[str, tuple]) -> Value | None:
    """The value and type of a constant expression over the known constants ``consts``."""
    k = node.type
    if k == "parenthesized_expression" and node.named_child_count == 1:
        return const_value(node.named_children[0], consts)
    if k == "number_literal":
        return _number(node)
    if k in ("identifier", "qualified_identifier"):
        got = consts.get(_text(node).lstrip(":"))
        return (got[0], got[1]) if got is not None else None
    if k == "unary_expression":
        return _unary(node, consts)
    if k == "binary_expression":
        return _binary(node, consts)
    return None


def _initialiser(params: ts.Node, consts: Mapping[str, tuple]) -> Value | None:
    """The value of the "parameter list" ``(expr)`` read as an expression."""
    from cuda2nki.frontend.cst import parse_bytes

    text = _text(params)
    if not (text.startswith("(") and text.endswith(")")) or not text[1:-1].strip():
        return None
    root = parse_bytes(b"int __v = (" + text[1:-1].encode() + b");").root_node
    decl = root.named_children[0] if root.named_children else None
    d0 = decl.child_by_field_id(F.declarator) if decl is not None else None
    init = d0.child_by_field_id(F.value) if d0 is not None else None
    return const_value(init, consts) if init is not None and not root.has_error else None


def file_scope_direct_init(unit: object, node: ts.Node, words: set[str]) -> bool:
    """Record the constants of ``node`` (``constexpr unsigned n(rows * cols);``) in
    ``unit.consts``; whether it was such a declaration."""
    if not words & {"constexpr", "const"}:
        return False
    from cuda2nki.frontend.lower import BodyLowerer
    from cuda2nki.frontend.lowerbase import _Placeholder

    try:
        ty = BodyLowerer(unit, "<file>", host=True).type_of(node.child_by_field_id(F.type))  # type: ignore[arg-type]
    except _Placeholder:
        return False
    if not isinstance(ty, A.ScalarType) or ty.name == "void":
        return False
    consts = unit.consts  # type: ignore[attr-defined]
    found: list[str] = []
    for d in node.children_by_field_id(F.declarator):
        name, params = d.child_by_field_id(F.declarator), d.child_by_field_id(F.parameters)
        if d.type != "function_declarator" or name is None or name.type != "identifier":
            return False
        got = _initialiser(params, consts) if params is not None else None
        if got is None:
            return False
        found.append(_text(name))  # known to the declarators after it
        consts[found[-1]] = (convert(got[0], ty), A.ScalarType(name=ty.name))
    return bool(found)
