"""Operators on structs that the program defines: ``a + b`` calling ``operator+(a, b)``.

``struct Cplx { float re, im; };`` with ``__device__ Cplx operator*(Cplx p, Cplx q)`` makes
``u * v`` a call of that function, not lane-wise arithmetic.  A binary operator with a
struct operand (a record struct, held as a short vector, or an aggregate struct held member by
member) and a device function ``operator<op>`` defined for it is lowered as that call.  A
record result is a value usable anywhere; an aggregate result comes back through its member
pointers, so such an expression may be a whole initialiser or the whole right-hand side of an
assignment (``Cx e = c + d;``, ``e = c + d;``).  A member operator of an aggregate struct
(``float operator*(const V3& o) const``) is called on the left operand; an aggregate
operand with no operator defined for it stays refused (C2N1025).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType
from cuda2nki.frontend.cst import F

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

#: operand forms that may denote a struct value
_STRUCT_OPERANDS = frozenset(
    ("identifier", "field_expression", "subscript_expression", "pointer_expression")
)
#: the binary operators a struct may define
_OPERATORS = frozenset("+ - * / % & | ^ << >> == != < > <= >=".split())


class StructOperatorLowering(_Base):
    """User-defined binary operators on structs: a mixin of
    :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    def operand(self, node: ts.Node) -> A.Expr:
        """An operand of a binary operator, which may name a struct variable."""
        if node.type not in _STRUCT_OPERANDS:
            return self.expr(node)
        old, self.agg_ok = self.agg_ok, True
        try:
            return self.expr(node)
        finally:
            self.agg_ok = old

    def struct_operator(self, node: ts.Node, op: str, left: A.Expr, right: A.Expr) -> A.Expr | None:
        """``left op right`` as a call of the program's ``operator<op>`` when an operand is a
        record struct and one is defined, else None."""
        if op not in _OPERATORS or not (_is_record(self, left.ty) or _is_record(self, right.ty)):
            return None
        fi = self._callee([f"operator{op}"])
        if fi is None:
            return None
        kids = [node.child_by_field_id(F.left), node.child_by_field_id(F.right)]
        return self._user_call(node, f"operator{op}", fi, [left, right], [], kids)  # type: ignore[arg-type]

    def aggregate_operator(self, node: ts.Node, outs: list[A.Expr]) -> A.Expr | None:
        """``c + d`` of aggregate structs stored into a struct variable (its member addresses
        ``outs``): the call of ``operator+`` returning through them, else None."""
        if node.type != "binary_expression":
            return None
        op_node = node.child_by_field_id(F.operator)
        op = op_node.text.decode() if op_node is not None and op_node.text else ""
        if op not in _OPERATORS:
            return None
        fi = self._callee([f"operator{op}"])
        kids = [node.child_by_field_id(F.left), node.child_by_field_id(F.right)]
        args = [self.agg_value(k) for k in kids]  # type: ignore[arg-type]
        if fi is None:  # a member `S operator+(const S& o) const`
            old, self.agg_out = self.agg_out, outs
            try:
                return self.member_operator(node, op, args[0], kids)  # type: ignore[arg-type]
            finally:
                self.agg_out = old
        return self._user_call(node, f"operator{op}", fi, args, [], kids, outs)  # type: ignore[arg-type]

    def operand_operator(
        self, node: ts.Node, op: str, left: A.Expr, right: A.Expr, kids: list[ts.Node]
    ) -> A.Expr:
        """``a op b`` with an aggregate struct operand, its value not a struct (``a == b``, a
        dot product ``a * b``): the program's ``operator<op>``, free or a member of ``a``'s
        struct; refused (C2N1025) when there is none."""
        fi = self._callee([f"operator{op}"]) if op in _OPERATORS else None
        if fi is not None:
            return self._user_call(node, f"operator{op}", fi, [left, right], [], kids)
        got = self.member_operator(node, op, left, kids)
        if got is None:
            agg = left.ty if isinstance(left.ty, AggregateType) else right.ty
            self.agg_refused_use(node, agg)  # type: ignore[arg-type]
        return got  # type: ignore[return-value]

    def member_operator(
        self, node: ts.Node, op: str, left: A.Expr, kids: list[ts.Node]
    ) -> A.Expr | None:
        """``a op b`` as ``a.operator<op>(b)`` when ``a``'s struct defines it, else None."""
        got = self.object_leaves(node, left, False) if self.u.methods else None
        if got is None or not self.has_method(got[0].name, f"operator{op}"):
            return None
        return self.method_call(node, got[0], got[1], f"operator{op}", [kids[1]], kids[0])


def _is_record(low: StructOperatorLowering, t: A.CType | None) -> bool:
    return isinstance(t, A.VectorType) and low.u.records.get(t.name) is not None
