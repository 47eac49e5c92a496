"""GNU statement expressions and ``__typeof__``: ``({ __typeof__(x) _x = (x); ...; _x < _y ?
_x : _y; })``.

Generated code (polyhedral compilers above all) spells ``min``/``max`` as macros that evaluate
each argument once::

    #define min(x,y) ({ __typeof__(x) _x = (x); __typeof__(y) _y = (y); _x < _y ? _x : _y; })

The preprocessing respells ``__typeof__`` and ``__typeof`` as ``decltype`` (same width, see
:mod:`cuda2nki.frontend.preprocess`); :func:`typeof_type` gives its type: the expression's,
without a reference (a written ``decltype`` of an lvalue other than a name, a reference in
C++, is refused).  :func:`statement_expression` lowers a statement expression whose
statements before the last declare variables initialised by expressions without side effects
(no assignment, increment, or call of a device function or atomic), and whose last statement
is an expression: its value is that expression with each variable replaced by its initial
value converted to the variable's type.  Evaluating an initialiser at each use instead of once
gives the same value, as nothing in between writes.  Any other statement expression is refused
(C2N1010).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS
from cuda2nki.frontend.typesys import unqualified
from cuda2nki.frontend.visit import _child_fields, walk

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

#: the width of ``__typeof__`` respelled as ``decltype`` and two spaces
RESPELLED = b"decltype  "
_LVALUES = frozenset(("subscript_expression", "pointer_expression", "field_expression"))


def typeof_type(low: BodyLowerer, node: ts.Node) -> A.CType:
    """The type ``decltype(e)`` / ``__typeof__(e)`` names: ``e``'s type."""
    inner = [c for c in node.named_children if c.kind_id not in COMMENT_IDS]
    if len(inner) != 1:
        raise low.fail("C2N1022", node, name=low.text(node))
    written = low.src[node.start_byte : node.start_byte + len(RESPELLED)] != RESPELLED
    if written and _strip(inner[0]).type in _LVALUES:  # `decltype(a[i])`: a reference
        raise low.fail("C2N1010", node, what="decltype of an lvalue (a reference type)")
    ty = low.expr(inner[0]).ty
    if ty is None or not isinstance(ty, (A.ScalarType, A.VectorType, A.PointerType)):
        raise low.fail("C2N1022", node, name=low.text(node))
    return unqualified(ty)


def _strip(node: ts.Node) -> ts.Node:
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def statement_expression(low: BodyLowerer, paren: ts.Node, body: ts.Node) -> A.Expr:
    """The value of ``({ body })`` (see the module docstring)."""
    stmts = [c for c in body.named_children if c.kind_id not in COMMENT_IDS]
    if not stmts or stmts[-1].type != "expression_statement" or not stmts[-1].named_children:
        raise low.fail("C2N1010", paren, what="statement expression without a final value")
    values: dict[str, A.Expr] = {}
    low.push_scope()
    try:
        for s in stmts[:-1]:
            if s.type != "declaration":
                raise low.fail("C2N1010", s, what="statement expression with other statements")
            for d in low.stmt(s):
                values[d.name] = _initial(low, s, d, values)  # type: ignore[union-attr]
        value = low.expr(stmts[-1].named_children[0])
    finally:
        low.pop_scope()
    _check_pure(low, paren, value)
    return _substitute(value, values)


def _initial(low: BodyLowerer, s: ts.Node, d: A.Stmt, values: dict[str, A.Expr]) -> A.Expr:
    """A declared variable's initial value, of its type."""
    if not isinstance(d, A.VarDecl) or d.init is None or isinstance(d.ty, A.ArrayType):
        raise low.fail("C2N1010", s, what="statement expression declaring this")
    _check_pure(low, s, d.init)
    init = _substitute(d.init, values)
    to = unqualified(d.ty)
    if unqualified(init.ty) == to:
        return init
    return N.Cast(loc=init.loc, to=to, operand=init, kind="c", ty=to)


def _check_pure(low: BodyLowerer, node: ts.Node, e: A.Expr) -> None:
    for n in walk(e):
        impure = isinstance(n, A.Assign) or (
            isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--")
        )
        if isinstance(n, A.Call):
            impure = n.target is not None or "atomic" in n.func or n.func.startswith("__c2n")
        if impure:
            raise low.fail("C2N1010", node, what="statement expression with side effects")


def _substitute(e: A.Expr, values: dict[str, A.Expr]) -> A.Expr:
    """``e`` with each name of ``values`` replaced by its value."""
    if not values:
        return e
    if isinstance(e, A.Name):
        return values.get(e.name, e)
    if not isinstance(e, A.Node):
        return e
    changes = {}
    for f in _child_fields(type(e)):
        v = getattr(e, f)
        if isinstance(v, A.Node):
            got = _substitute(v, values)
        elif isinstance(v, tuple) and any(isinstance(x, A.Node) for x in v):
            got = tuple(_substitute(x, values) for x in v)
        else:
            continue
        if got is not v and got != v:
            changes[f] = got
    return dataclasses.replace(e, **changes) if changes else e
