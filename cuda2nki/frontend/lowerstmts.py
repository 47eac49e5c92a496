"""Statements in the body lowering: blocks, control flow, loops (with their unroll
hints) and expression statements (a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.autoret import note_return
from cuda2nki.frontend.coop import CG_NOOP
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    F,
)
from cuda2nki.frontend.lowerbase import (
    INTERNAL_ERRORS,
    _Placeholder,
    _text,
    address_of,
    is_lvalue,
)
from cuda2nki.frontend.lowertables import (
    _BINARY_IDS,
    _CALL_IDS,
    _INITIALIZER_LIST_IDS,
    _UNROLL_TARGETS,
)
from cuda2nki.frontend.nodekinds import REJECTED_KINDS

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object


class StatementLowering(_Base):
    """Statements in the body lowering: blocks, control flow, loops (with their unroll"""

    def block(self, node: ts.Node, new_scope: bool = True) -> A.Block:
        if new_scope:
            self.push_scope()
        body: list[A.Stmt] = []
        try:
            for c in node.named_children:
                body.extend(self.stmt(c))
        finally:
            if new_scope:
                self.pop_scope()
        return N.Block(loc=(node.byte_range, self.placer), body=tuple(body))

    def stmt(self, node: ts.Node) -> list[A.Stmt]:
        h = self._stmt_by_id[node.kind_id]
        if self.pending_unroll is not None and node.type not in _UNROLL_TARGETS:
            self.pending_unroll = None  # `#pragma unroll` applies to the loop right after it
        try:
            if h is not None:
                return h(self, node)
            self._refuse(node)
        except _Placeholder:
            pass
        except INTERNAL_ERRORS as exc:  # a front-end invariant this input breaks: refuse it here
            if os.environ.get("CUDA2NKI_DEBUG"):
                raise
            self.error("C2N0005", node, reason=f"front end: {type(exc).__name__} {exc}".strip())
        return []

    def stmt1(self, node: ts.Node | None) -> A.Stmt:
        """A statement in a position that takes one (a loop or if body)."""
        if node is None:
            return N.Empty(loc=SourceLoc(self.u.filename, 0, 0))
        if node.type == "compound_statement":
            return self.block(node)
        self.push_scope()
        try:
            got = self.stmt(node)
        finally:
            self.pop_scope()
        if len(got) == 1:
            return got[0]
        return N.Block(loc=(node.byte_range, self.placer), body=tuple(got))

    def _refuse(self, node: ts.Node) -> None:
        if self.cub_local_type(node):  # `union TempStorage { typename BR::TempStorage r; };`
            return
        if node.is_error or node.is_missing:
            from cuda2nki.frontend.cst import describe_error

            raise self.fail("C2N1001", node, func=self.func_name, what=describe_error(node))
        code = REJECTED_KINDS.get(node.type, "C2N1010")
        what = node.type.replace("_", " ")
        if code in ("C2N1011", "C2N1013"):
            raise self.fail(code, node)
        raise self.fail(code, node, what=what)

    def s_compound(self, node: ts.Node) -> list[A.Stmt]:
        return [self.block(node)]

    def s_expression(self, node: ts.Node) -> list[A.Stmt]:
        inner = node.named_children
        if not inner:
            return [N.Empty(loc=(node.byte_range, self.placer))]
        e_node = inner[0]
        kind = e_node.kind_id
        if kind in _BINARY_IDS and self._is_misparsed_cg_decl(e_node):
            return self._cg_misparsed_decl(e_node)
        if (
            kind in _CALL_IDS
            and b"printf" in self.src[e_node.start_byte : e_node.end_byte]  # cheap test first
            and self._callee_name(e_node) == "printf"
        ):
            self.note("C2N1019", e_node)
            return [N.Empty(loc=(node.byte_range, self.placer))]
        if kind in _CALL_IDS and self.is_lambda_call(e_node):
            return self.lambda_call(node, e_node)
        pre: list[A.Stmt] = []
        if e_node.type == "assignment_expression" and not self.host:
            right = e_node.child_by_field_id(F.right)
            if self.whole_lambda_call(right):  # `out[i] = f(x);`: f's value computed first
                pre = self.lambda_value(node, right)  # type: ignore[arg-type]
        e = self._expr_by_id[kind](self, e_node)
        if pre:
            self.lambda_done(right)
        if e is CG_NOOP:
            return []
        return [*pre, N.ExprStmt(loc=(node.byte_range, self.placer), expr=e)]

    def s_if(self, node: ts.Node) -> list[A.Stmt]:
        cond_node = node.child_by_field_id(F.condition)
        cond = self.condition(cond_node)
        alt = node.child_by_field_id(F.alternative)
        alt_inner = [c for c in alt.named_children if c.kind_id not in COMMENT_IDS] if alt else []
        if b"constexpr" in self.src[node.start_byte : cond_node.start_byte] and any(
            c.type == "constexpr" for c in node.children
        ):  # if constexpr: one branch only
            v = self.const_value(cond)
            if v is None and not self.generic:
                raise self.fail("C2N1030", node, what="if constexpr condition is not a constant")
            if v is not None:
                taken = (
                    node.child_by_field_id(F.consequence)
                    if v
                    else (alt_inner[0] if alt_inner else None)
                )
                return [self.stmt1(taken)] if taken is not None else []
        then = self.stmt1(node.child_by_field_id(F.consequence))
        else_ = self.stmt1(alt_inner[0]) if alt_inner else None
        return [N.If(loc=(node.byte_range, self.placer), cond=cond, then=then, else_=else_)]

    def condition(self, node: ts.Node | None) -> A.Expr:
        if node is None:
            raise _Placeholder()
        if node.type == "condition_clause":
            v = node.child_by_field_id(F.value)
            if v is None or node.child_by_field_id(F.initializer) is not None:
                raise self.fail("C2N1010", node, what="declaration in a condition")
            if v.type == "declaration":
                raise self.fail("C2N1010", node, what="declaration in a condition")
            return self.expr(v)
        return self.expr(node)

    def _take_unroll(self) -> int | None:
        u, self.pending_unroll = self.pending_unroll, None
        return u

    def s_for(self, node: ts.Node) -> list[A.Stmt]:
        unroll = self._take_unroll()
        self.push_scope()
        try:
            init: list[A.Stmt] = []
            ini = node.child_by_field_id(F.initializer)
            if ini is not None:
                if ini.type == "declaration":
                    init = self.s_declaration(ini)
                else:
                    init = [N.ExprStmt(loc=(ini.byte_range, self.placer), expr=self.expr(ini))]
            c = node.child_by_field_id(F.condition)
            cond = self.expr(c) if c is not None else None
            u = node.child_by_field_id(F.update)
            step = self.expr(u) if u is not None else None
            body = self.stmt1(node.child_by_field_id(F.body))
        finally:
            self.pop_scope()
        return [
            N.For(
                loc=(node.byte_range, self.placer),
                init=tuple(init),
                cond=cond,
                step=step,
                body=body,
                unroll=unroll,
            )
        ]

    def s_while(self, node: ts.Node) -> list[A.Stmt]:
        self._take_unroll()
        cond = self.condition(node.child_by_field_id(F.condition))
        body = self.stmt1(node.child_by_field_id(F.body))
        return [N.While(loc=(node.byte_range, self.placer), cond=cond, body=body)]

    def s_do(self, node: ts.Node) -> list[A.Stmt]:
        self._take_unroll()
        body = self.stmt1(node.child_by_field_id(F.body))
        cond = self.condition(node.child_by_field_id(F.condition))
        return [N.DoWhile(loc=(node.byte_range, self.placer), body=body, cond=cond)]

    def s_switch(self, node: ts.Node) -> list[A.Stmt]:
        cond = self.condition(node.child_by_field_id(F.condition))
        body = node.child_by_field_id(F.body)
        cases: list[A.Case] = []
        self.push_scope()
        try:
            for c in body.named_children if body is not None else ():
                if c.kind_id in COMMENT_IDS:
                    continue
                if c.type != "case_statement":
                    raise self.fail("C2N1010", c, what="statement before the first case label")
                cases.append(self._case(c))
        finally:
            self.pop_scope()
        merged: list[A.Case] = []
        for case in cases:  # `case 1: case 2: body` -> one Case with values (1, 2)
            prev = merged[-1] if merged else None
            if prev is not None and not prev.body and prev.values and case.values:
                merged[-1] = N.Case(loc=prev.loc, values=prev.values + case.values, body=case.body)
            else:
                merged.append(case)
        return [N.Switch(loc=(node.byte_range, self.placer), cond=cond, cases=tuple(merged))]

    def _case(self, node: ts.Node) -> A.Case:
        value = node.child_by_field_id(F.value)
        values: tuple[int, ...] = ()
        if value is not None:
            v = self.const_int_node(value)
            if v is None:
                raise self.fail("C2N1030", value, what="case label is not an integer constant")
            values = (v,)
        body: list[A.Stmt] = []
        for c in node.named_children:
            if value is not None and c.id == value.id:
                continue
            body.extend(self.stmt(c))
        return N.Case(loc=(node.byte_range, self.placer), values=values, body=tuple(body))

    def s_break(self, node: ts.Node) -> list[A.Stmt]:
        return [N.Break(loc=(node.byte_range, self.placer))]

    def s_continue(self, node: ts.Node) -> list[A.Stmt]:
        return [N.Continue(loc=(node.byte_range, self.placer))]

    def s_return(self, node: ts.Node) -> list[A.Stmt]:
        inner = [c for c in node.named_children if c.kind_id not in COMMENT_IDS]
        if isinstance(self.return_type, AggregateType):
            return self.agg_return(node, inner[0] if inner else None)
        if inner and inner[0].kind_id in _INITIALIZER_LIST_IDS:  # return {a, b};
            value = self._init_list(inner[0], self.return_type)
        else:
            value = self.expr(inner[0]) if inner else None
        note_return(self, value)
        if self.returns_ref and value is not None:  # `return data[i];` of a `T&` function
            if not is_lvalue(value):
                raise self.fail("C2N1030", node, what="a reference returned to a temporary")
            value = address_of(value)
        return [N.Return(loc=(node.byte_range, self.placer), value=value)]

    def s_preproc_call(self, node: ts.Node) -> list[A.Stmt]:
        d = node.child_by_field_id(F.directive)
        arg = node.child_by_field_id(F.argument)
        if d is not None and _text(d).replace(" ", "") == "#pragma" and arg is not None:
            words = _text(arg).split()
            if words and words[0] == "unroll":
                n = 0
                if len(words) > 1:
                    try:
                        n = int(words[1], 0)
                    except ValueError:
                        s = self.lookup(words[1])
                        n = int(s.const) if s is not None and isinstance(s.const, int) else 0
                self.pending_unroll = n
        return []

    def s_labeled(self, node: ts.Node) -> list[A.Stmt]:
        out: list[A.Stmt] = []
        for c in node.named_children:
            if c.type != "statement_identifier":
                out.extend(self.stmt(c))
        return out

    def s_ignore(self, node: ts.Node) -> list[A.Stmt]:
        return []

    def s_attributed(self, node: ts.Node) -> list[A.Stmt]:
        out: list[A.Stmt] = []
        for c in node.named_children:
            if c.type not in ("attribute_declaration", "attribute"):
                out.extend(self.stmt(c))
        return out

    def s_typedef(self, node: ts.Node) -> list[A.Stmt]:
        if self.cub_typedef(node):
            return []
        self.u.register_typedef(node, self)
        return []
