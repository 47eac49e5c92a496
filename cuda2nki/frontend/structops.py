"""Operators on structs that the program defines: ``a + b`` calling ``operator+(a, b)``.

``struct Cplx { float re, im; };`` with ``__device__ Cplx operator*(Cplx p, Cplx q)`` makes
``u * v`` a call of that function, not lane-wise arithmetic.  A binary operator with a
struct operand (a record struct, held as a short vector, or an aggregate struct held member by
member) and a device function ``operator<op>`` defined for it is lowered as that call.  A
record result is a value usable anywhere; an aggregate result comes back through its member
pointers, so such an expression may be a whole initialiser or the whole right-hand side of an
assignment (``Cx e = c + d;``, ``e = c + d;``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.cst import F

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

#: the binary operators a struct may define
_OPERATORS = frozenset("+ - * / % & | ^ << >> == != < > <= >=".split())


class StructOperatorLowering(_Base):
    """User-defined binary operators on structs: a mixin of
    :class:`cuda2nki.frontend.lower.BodyLowerer`."""

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
        fi = self._callee([f"operator{op}"]) if op in _OPERATORS else None
        if fi is None:
            return None
        kids = [node.child_by_field_id(F.left), node.child_by_field_id(F.right)]
        args = [self.agg_value(k) for k in kids]  # type: ignore[arg-type]
        return self._user_call(node, f"operator{op}", fi, args, [], kids, outs)  # type: ignore[arg-type]


def _is_record(low: StructOperatorLowering, t: A.CType | None) -> bool:
    return isinstance(t, A.VectorType) and low.u.records.get(t.name) is not None
