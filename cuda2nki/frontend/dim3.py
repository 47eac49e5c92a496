"""``dim3`` values in device code: local variables and ``dim3(...)`` expressions.

A ``dim3`` is three ``unsigned int`` members ``x``, ``y``, ``z`` built by a constructor whose
missing arguments are 1: ``dim3 p(tx + 1, ty + 1)`` is ``(tx + 1, ty + 1, 1)``, ``dim3 q;`` is
``(1, 1, 1)``, ``dim3 r{n}`` (list initialisation calls the same constructor) is ``(n, 1, 1)``.
Kernels keep 3-D coordinates in one (``dim3 idx(tx + 1, ty + 1, tz + 1); s[idx.z][idx.y][idx.x]``).
Each is lowered as a ``uint3`` local initialised by ``make_uint3`` with the missing components
filled in; a copy (``dim3 b = blockDim;``, ``dim3 c = b;``) copies the three members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.directinit import direct_initialiser
from cuda2nki.frontend.lowerbase import BUILTIN_DIM3, Sym, _text
from cuda2nki.frontend.typesys import UINT

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

#: the type of a ``dim3`` value (as ``threadIdx`` and the other builtins have it)
DIM3 = A.VectorType(name="uint3", base=A.ScalarType(name="uint32"), width=3)
_LISTS = ("argument_list", "initializer_list")


def is_dim3(low: BodyLowerer, type_node: ts.Node | None) -> bool:
    """Whether a declaration's type is ``dim3`` in device code (not a local name so spelled)."""
    return (
        type_node is not None
        and not low.host
        and type_node.type == "type_identifier"
        and _text(type_node) == "dim3"
        and "dim3" not in low.u.typedefs
        and low.lookup("dim3") is None
    )


def dim3_type(name: str) -> A.CType | None:
    """``dim3`` as a type name (None for any other name)."""
    return DIM3 if name == "dim3" else None


def dim3_declaration(low: BodyLowerer, node: ts.Node) -> list[A.Stmt]:
    """The statements of ``dim3 a(x, y), b = dim3(n), c;`` (``node``, a declaration)."""
    if any(_text(c) in ("__shared__", "extern", "static") for c in node.children):
        raise low.fail("C2N1010", node, what="a shared, static or extern dim3")
    out: list[A.Stmt] = []
    for decl in node.children_by_field_id(F.declarator):
        value = None
        if decl.type == "init_declarator":
            value = decl.child_by_field_id(F.value)
            decl = decl.child_by_field_id(F.declarator)
        if decl.type == "function_declarator":  # `dim3 r(n)`: reread as `dim3 r{n}`
            direct_initialiser(low, decl)
            raise low.fail("C2N1010", decl, what="function declaration inside a function")
        if decl.type != "identifier":
            raise low.fail("C2N1010", decl, what="a dim3 array, pointer or reference")
        init = _initial(low, value, decl)
        name = _text(decl)
        low.declare(name, Sym(DIM3))
        out.append(N.VarDecl(loc=low.loc(decl), name=name, ty=DIM3, init=init, storage="local"))
    return out


def _initial(low: BodyLowerer, value: ts.Node | None, decl: ts.Node) -> A.Expr:
    if value is None:
        return _make(low, [], decl)
    if value.type in _LISTS:
        return _make(low, _items(value), value)
    name = _text(value)
    if value.type == "identifier" and name in BUILTIN_DIM3 and low.visible.get(name) is None:
        loc = low.loc(value)  # `dim3 b = blockDim;`: its three members
        axes = tuple(N.Builtin(loc=loc, name=name, dim=d, ty=UINT) for d in "xyz")
        return N.Call(loc=loc, func="make_uint3", args=axes, ty=DIM3)
    return low.expr(value)


def dim3_call(low: BodyLowerer, node: ts.Node) -> A.Expr:
    """``dim3(x[, y[, z]])`` (a call expression): a ``uint3`` with the missing axes 1."""
    return _make(low, _items(node.child_by_field_id(F.arguments)), node)


def is_dim3_call(low: BodyLowerer, fn: ts.Node) -> bool:
    """Whether the callee ``fn`` of a call in device code is the ``dim3`` constructor."""
    return not low.host and _text(fn) == "dim3" and low.lookup("dim3") is None


def _items(node: ts.Node | None) -> list[ts.Node]:
    if node is None:
        return []
    return [c for c in node.named_children if c.kind_id not in COMMENT_IDS]


def _make(low: BodyLowerer, items: list[ts.Node], at: ts.Node) -> A.Expr:
    if len(items) > 3:
        raise low.fail("C2N1028", at, name="dim3", got=len(items), expected=3)
    loc = low.loc(at)
    axes = [low.expr(c) for c in items]
    axes += [N.IntLit(loc=loc, value=1, ty=UINT)] * (3 - len(axes))
    return N.Call(loc=loc, func="make_uint3", args=tuple(axes), ty=DIM3)
