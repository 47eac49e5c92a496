"""Lambdas in device code, inlined where they are called.

``auto step = [&](int t) { acc[t] += w * x[t]; };`` followed by ``step(i);`` statements is how
real kernels (llm.c's attention backward) write a loop body once for several loops.  A lambda
that captures by reference (``[&]``) or captures nothing (``[]``), bound to an ``auto``
variable and called as a statement, is inlined at each call: a block that declares each
parameter as a local initialised from its argument, then the lambda's body.  The captured names
are the enclosing function's variables, so reads see their values at the call and writes land
in them, as a reference capture does.

Refused (C2N1010, at the construct): capture by value (``[=]``, ``[x]``: the copy is taken
where the lambda is created, not where it is called), a ``return`` other than a last
``return;``, a call used as a value, a call where a name the body uses has been shadowed since
the lambda was created, and a lambda used other than called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import Sym, _text

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

LAMBDA = A.OpaqueType(name="<lambda>")


def _walk(node: ts.Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


class LambdaLowering(_Base):
    """Inlined lambdas: a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    def lambda_decl(self, decl: ts.Node, name: str, value: ts.Node) -> list[A.Stmt]:
        """``auto f = [&](...) {...};``: remember the lambda; it is inlined at its calls."""
        cap = next((c for c in value.children if c.type == "lambda_capture_specifier"), None)
        inner = [c for c in cap.named_children if c.kind_id not in COMMENT_IDS] if cap else []
        if cap is None or not (not inner or (len(inner) == 1 and _text(inner[0]).strip() == "&")):
            raise self.fail("C2N1010", cap or value, what="lambda capturing by value")
        body = value.child_by_field_id(F.body)
        if body is None:
            raise self.fail("C2N1010", value, what="lambda without a body")
        stmts = [c for c in body.named_children if c.kind_id not in COMMENT_IDS]
        for n in _walk(body):
            if n.type == "lambda_expression" and n is not value:
                raise self.fail("C2N1010", n, what="lambda inside a lambda")
            if n.type == "return_statement" and (
                n is not (stmts[-1] if stmts else None) or n.named_child_count
            ):
                raise self.fail("C2N1010", n, what="return in an inlined lambda")
        used = {_text(n) for n in _walk(body) if n.type == "identifier"}
        seen = {k: self.visible[k] for k in used if k in self.visible}
        if not hasattr(self, "lambdas"):
            self.lambdas = {}
        self.lambdas[name] = (value, seen)
        self.declare(name, Sym(LAMBDA))
        return []

    def is_lambda_call(self, node: ts.Node) -> bool:
        fn = node.child_by_field_id(F.function)
        if fn is None or fn.type != "identifier":
            return False
        s = self.visible.get(_text(fn))
        return s is not None and s.ty is LAMBDA

    def lambda_call(self, stmt: ts.Node, call: ts.Node) -> list[A.Stmt]:
        """``f(a, b);``: the lambda's body in a block, its parameters bound to the arguments."""
        name = _text(call.child_by_field_id(F.function))
        value, seen = self.lambdas[name]
        for k, sym in seen.items():
            if self.visible.get(k) is not sym:
                raise self.fail("C2N1010", call, what=f"lambda call where '{k}' is shadowed")
        args_node = call.child_by_field_id(F.arguments)
        arg_nodes = [c for c in args_node.named_children if c.kind_id not in COMMENT_IDS]
        decl = next((c for c in value.children if c.type == "lambda_declarator"), None)
        plist = decl.child_by_field_id(F.parameters) if decl is not None else None
        params = [
            p
            for p in (plist.named_children if plist is not None else ())
            if p.type == "parameter_declaration"
        ]
        if len(params) != len(arg_nodes):
            raise self.fail("C2N1028", call, name=name, got=len(arg_nodes), expected=len(params))
        args = [self.expr(a) for a in arg_nodes]  # in the caller's scope, before binding
        loc = (stmt.byte_range, self.placer)
        self.push_scope()
        try:
            out: list[A.Stmt] = []
            for p, a in zip(params, args):
                quals = tuple(c for c in p.children if c.type == "type_qualifier")
                base = self.type_of(p.child_by_field_id(F.type), quals)
                d = p.child_by_field_id(F.declarator)
                if d is None or d.type == "reference_declarator":
                    raise self.fail("C2N1010", p, what="lambda parameter (unnamed or reference)")
                pname, ty = self._declarator_type(d, base)
                self.declare(pname, Sym(ty))
                out.append(N.VarDecl(loc=(p.byte_range, self.placer), name=pname, ty=ty, init=a))
            body = value.child_by_field_id(F.body)
            for c in body.named_children:
                if c.kind_id in COMMENT_IDS or c.type == "return_statement":
                    continue
                out.extend(self.stmt(c))
        finally:
            self.pop_scope()
        return [N.Block(loc=loc, body=tuple(out))]
