"""Lambdas in device code, inlined where they are called.

``auto step = [&](int t) { acc[t] += w * x[t]; };`` followed by ``step(i);`` statements is how
real kernels (llm.c's attention backward) write a loop body once for several loops.  A lambda
bound to an ``auto`` variable is inlined at each call: a block that declares each parameter as
a local initialised from its argument, then the lambda's body.

Captures: by reference (``[&]``, ``[&acc, &n]``) the body's names are the enclosing
function's variables, so reads see their values at the call and writes land in them.  By value
(``[=]``, ``[x]``, ``[&, x]``, ``[=, &acc]``) the copy is taken where the lambda is created:
a local ``<lambda>__<name>`` declared there, which the inlined block re-declares under the
captured name (read-only, as in a lambda that is not ``mutable``).

A lambda returning a value may be called for its value where
the call is a whole initialiser (``float y = f(x);``) or the whole right-hand side of an
assignment statement (``out[i] = f(x);``, ``acc += f(x);``): the block stores the value in a
local the statement then reads.

A ``return`` before the end of the body (in a ``switch``, a loop, a branch) ends the inlined
block as it would end the call (see :mod:`cuda2nki.frontend.lambdareturns`).

Refused (C2N1010, at the construct): a call used
inside a larger expression, a call where a name the body uses has been shadowed since the
lambda was created, an array or ``this`` captured by value, a ``mutable`` lambda that copies, and a lambda
used other than called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.autoret import is_auto
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lambdareturns import Exit, rewrite
from cuda2nki.frontend.lowerbase import Sym, _text
from cuda2nki.frontend.typesys import unqualified, with_const

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

LAMBDA = A.OpaqueType(name="<lambda>")
AUTO = A.OpaqueType(name="auto")
VOID_T = A.ScalarType(name="void")
INT_T = A.ScalarType(name="int32")


def _walk(node: ts.Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


_DECLARATORS = frozenset(
    (
        "init_declarator",
        "pointer_declarator",
        "reference_declarator",
        "array_declarator",
        "parameter_declaration",
        "declaration",
        "optional_parameter_declaration",
    )
)


def declared_inside(value: ts.Node) -> set[str]:
    """The names a lambda declares: its parameters and the locals of its body."""
    out = set()
    for n in _walk(value):
        if n.type != "identifier" or n.parent is None or n.parent.type not in _DECLARATORS:
            continue
        if n.parent.child_by_field_name("declarator") == n:
            out.add(_text(n))
    return out


class LambdaLowering(_Base):
    """Inlined lambdas: a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    def lambda_decl(self, decl: ts.Node, name: str, value: ts.Node) -> list[A.Stmt]:
        """``auto f = [&](...) {...};``: remember the lambda; it is inlined at its calls.  The
        copies a capture by value takes are declared here."""
        cap = next((c for c in value.children if c.type == "lambda_capture_specifier"), None)
        if cap is None:
            raise self.fail("C2N1010", value, what="lambda without a capture list")
        body = value.child_by_field_id(F.body)
        if body is None:
            raise self.fail("C2N1010", value, what="lambda without a body")
        stmts = [c for c in body.named_children if c.kind_id not in COMMENT_IDS]
        returns = early = False
        for n in _walk(body):
            if n.type == "lambda_expression" and n is not value:
                raise self.fail("C2N1010", n, what="lambda inside a lambda")
            if n.type == "return_statement":
                early = early or n is not (stmts[-1] if stmts else None)
                returns = returns or n.named_child_count > 0
        used = {_text(n) for n in _walk(body) if n.type == "identifier"}
        by_value = self._by_value(cap, used)
        # the names the body reads from the enclosing scope at each call: not its own
        # parameters and locals, not the copies of a capture by value (re-declared at the call)
        own = declared_inside(value)
        seen = {k: self.visible[k] for k in used - own - by_value if k in self.visible}
        out: list[A.Stmt] = []
        copies: dict[str, str] = {}
        for k in sorted(by_value):
            sym = self.visible.get(k)
            if sym is None or sym.ty is None or sym.cg is not None or sym.ty is LAMBDA:
                continue  # a function, a constant folded away, a group: nothing to copy
            if isinstance(sym.ty, A.ArrayType) or sym.ref:
                raise self.fail("C2N1010", cap, what=f"lambda capturing '{k}' by value")
            copy = f"{name}__{k}"
            loc = (cap.byte_range, self.placer)
            init = N.Name(loc=loc, name=k, ty=sym.ty)
            out.append(N.VarDecl(loc=loc, name=copy, ty=unqualified(sym.ty), init=init))
            copies[k] = copy
        if copies and "mutable" in _text(value)[: body.start_byte - value.start_byte]:
            raise self.fail("C2N1010", value, what="mutable lambda capturing by value")
        if not hasattr(self, "lambdas"):
            self.lambdas = {}
        self.lambdas[name] = (value, seen, copies, returns, early)
        self.declare(name, Sym(LAMBDA))
        return out

    def _by_value(self, cap: ts.Node, used: set[str]) -> set[str]:
        """The names of ``used`` the capture list ``cap`` copies."""
        kids = [c for c in cap.children if c.kind_id not in COMMENT_IDS]
        default = next((_text(c) for c in kids if c.type == "lambda_default_capture"), "")
        refs: set[str] = set()
        vals: set[str] = set()
        for i, c in enumerate(kids):
            if c.type == "this":
                raise self.fail("C2N1010", c, what="lambda capturing 'this'")
            if c.type == "identifier":
                (refs if i and kids[i - 1].type == "&" else vals).add(_text(c))
            elif c.type not in ("[", "]", ",", "&", "lambda_default_capture"):
                raise self.fail("C2N1010", c, what=f"lambda capture '{_text(c)}'")
        if default == "=":
            return (used - refs) | vals
        return vals

    def is_lambda_call(self, node: ts.Node) -> bool:
        fn = node.child_by_field_id(F.function)
        if fn is None or fn.type != "identifier":
            return False
        s = self.visible.get(_text(fn))
        return s is not None and s.ty is LAMBDA

    def lambda_call(self, stmt: ts.Node, call: ts.Node) -> list[A.Stmt]:
        """``f(a, b);``: the lambda's body in a block, its parameters bound to the arguments."""
        stmts, _ret = self.lambda_inline(stmt, call, None)
        return stmts

    def lambda_value(self, stmt: ts.Node, call: ts.Node) -> list[A.Stmt]:
        """``f(x)`` of a value-returning lambda as a whole initialiser or right-hand side:
        the statements computing it into a local, which the call then reads
        (:attr:`lambda_results`)."""
        name = _text(call.child_by_field_id(F.function))
        if not self.lambdas[name][3]:
            raise self.fail("C2N1010", call, what="value of a lambda that returns none")
        stmts, ret = self.lambda_inline(stmt, call, f"{name}__ret{call.start_byte}")
        assert ret is not None
        if not hasattr(self, "lambda_results"):
            self.lambda_results = {}
        self.lambda_results[call.id] = ret
        return stmts

    def lambda_result(self, call: ts.Node) -> A.Expr | None:
        """The local holding the value of the lambda call ``call`` (see :meth:`lambda_value`)."""
        return getattr(self, "lambda_results", {}).get(call.id)

    def lambda_done(self, call: ts.Node) -> None:
        """Forget the value of ``call`` once its statement is lowered: a lambda inlined again
        (called from two places of another lambda) computes the call afresh in its own block."""
        getattr(self, "lambda_results", {}).pop(call.id, None)

    def whole_lambda_call(self, node: ts.Node | None) -> bool:
        """Whether ``node`` is a call of a lambda whose value is not computed yet."""
        return (
            node is not None
            and node.type == "call_expression"
            and self.is_lambda_call(node)
            and self.lambda_result(node) is None
        )

    def lambda_inline(
        self, stmt: ts.Node, call: ts.Node, result: str | None
    ) -> tuple[list[A.Stmt], A.Expr | None]:
        """The block inlining the lambda call ``call``; with ``result``, its returned value is
        stored in a local of that name declared before the block (returned as a name)."""
        name = _text(call.child_by_field_id(F.function))
        value, seen, copies, _returns, early = self.lambdas[name]
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
        ret_var: A.Expr | None = None
        self.push_scope()
        try:
            out: list[A.Stmt] = []
            # the arguments first, into temporaries: the copies and parameters declared next
            # may shadow names the arguments read (`f(r, c)` with parameters `(c, r)`)
            args = [self._arg_temp(a, i, call, out) for i, a in enumerate(args)]
            for k, copy in copies.items():  # captured by value: the copy, read-only
                ty = self.visible[k].ty
                cty = with_const(unqualified(ty), True)  # type: ignore[arg-type]
                src = N.Name(loc=loc, name=copy, ty=unqualified(ty))  # type: ignore[arg-type]
                self.declare(k, Sym(cty))
                out.append(N.VarDecl(loc=loc, name=k, ty=cty, init=src))
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
            if early:  # returns before the end (see .lambdareturns)
                block, ret_var = self._early_returns(value, body, loc, out, result, call)
                return ([] if ret_var is None else [self._result_decl(ret_var, loc)]) + [
                    block
                ], ret_var
            for c in body.named_children:
                if c.kind_id in COMMENT_IDS:
                    continue
                if c.type != "return_statement":
                    out.extend(self.stmt(c))
                elif result is not None and c.named_child_count:
                    v = self.expr(c.named_children[0])
                    ret_var = N.Name(loc=loc, name=result, ty=unqualified(v.ty))  # type: ignore[arg-type]
                    out.append(
                        N.ExprStmt(
                            loc=loc,
                            expr=N.Assign(loc=loc, op="=", target=ret_var, value=v, ty=ret_var.ty),
                        )
                    )
        finally:
            self.pop_scope()
        block: A.Stmt = N.Block(loc=loc, body=tuple(out))
        if ret_var is None:
            return [block], None
        # the local holding the value, declared before the block
        return [self._result_decl(ret_var, loc), block], ret_var

    def _arg_temp(self, arg: A.Expr, i: int, call: ts.Node, out: list[A.Stmt]) -> A.Expr:
        """``arg`` stored in a fresh local (declared in ``out``), read back as its name."""
        ty = unqualified(arg.ty) if arg.ty is not None else None
        if not isinstance(ty, A.ScalarType | A.PointerType | A.VectorType):
            return arg  # a struct (its members), an array, a group: bound as it is
        name = f"__arg{i}_{call.start_byte}"
        out.append(N.VarDecl(loc=arg.loc, name=name, ty=ty, init=arg))
        return N.Name(loc=arg.loc, name=name, ty=ty)

    @staticmethod
    def _result_decl(ret_var: A.Expr, loc: object) -> A.Stmt:
        assert isinstance(ret_var, A.Name)
        return N.VarDecl(loc=loc, name=ret_var.name, ty=ret_var.ty, init=None, storage="local")  # type: ignore[arg-type]

    def _early_returns(
        self,
        value: ts.Node,
        body: ts.Node,
        loc: object,
        out: list[A.Stmt],
        result: str | None,
        call: ts.Node,
    ) -> tuple[A.Stmt, A.Name | None]:
        """The inlined body of a lambda that returns before its end: its statements lowered
        with the lambda's return type, then its returns rewritten into stores and exits."""
        decl = next((c for c in value.children if c.type == "lambda_declarator"), None)
        trailing = None
        if decl is not None:
            trailing = next((c for c in decl.children if c.type == "trailing_return_type"), None)
        saved = (self.return_type, self.returns_ref)
        self.return_type = (
            unqualified(self.type_descriptor(trailing.named_children[0]))
            if trailing is not None
            else AUTO
        )
        self.returns_ref = False
        try:
            lowered: list[A.Stmt] = []
            for c in body.named_children:
                if c.kind_id not in COMMENT_IDS:
                    lowered.extend(self.stmt(c))
            rtype = self.return_type
        finally:
            self.return_type, self.returns_ref = saved
        ret_var = None
        if result is not None and not is_auto(rtype) and rtype != VOID_T:
            ret_var = N.Name(loc=loc, name=result, ty=rtype)
        elif result is not None:
            raise self.fail("C2N1010", call, what="value of a lambda whose type is unknown")
        done = N.Name(loc=loc, name=f"__done{call.start_byte}", ty=INT_T)
        zero = N.IntLit(loc=loc, value=0, ty=INT_T)
        flag = N.VarDecl(loc=loc, name=done.name, ty=INT_T, init=zero, storage="local")
        body_out = rewrite(lowered, Exit(ret_var, done))
        return N.Block(loc=loc, body=(flag, *out, *body_out)), ret_var
