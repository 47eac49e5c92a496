"""Lowering of one function body (tree-sitter CST) to the typed CUDA AST.

:class:`BodyLowerer` walks statements and expressions through two handler tables keyed by node
type (``STMT_HANDLERS`` and ``EXPR_HANDLERS``); node kinds that may appear in a body but are
refused are listed in :mod:`cuda2nki.frontend.nodekinds` with their rule id.  Errors are
collected (the construct is replaced by a placeholder so that lowering carries on and reports
everything); a function with any error is rejected by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import Diagnostic, Severity, SourceLoc, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateLowering, AggregateType, align_of
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.asynccopy import AsyncCopyLowering
from cuda2nki.frontend.constants import KNOWN_CONSTANTS
from cuda2nki.frontend.constfold import convert as _convert
from cuda2nki.frontend.constfold import fold_binary as _fold_binary
from cuda2nki.frontend.constfold import numeric_limit as _numeric_limit
from cuda2nki.frontend.coop import CoopLowering
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    KIND_NAMES,
    QUALIFIER_IDS,
    F,
    language,
)
from cuda2nki.frontend.cubblock import CubLowering
from cuda2nki.frontend.fileshared import file_shared_name
from cuda2nki.frontend.globaltemplates import instance as global_template_instance
from cuda2nki.frontend.gridgroup import GRID_DIM3
from cuda2nki.frontend.groupreduce import GroupReduceLowering
from cuda2nki.frontend.lambdas import LambdaLowering
from cuda2nki.frontend.lowerbase import (
    BUILTIN_DIM3,
    REFUSED,
    Reparse,
    Sym,
    _Placeholder,
    _text,
    address_of,
)
from cuda2nki.frontend.lowercalls import CallLowering
from cuda2nki.frontend.lowerdecls import DeclarationLowering
from cuda2nki.frontend.lowerpacked import PackedWordLowering
from cuda2nki.frontend.lowerstmts import StatementLowering
from cuda2nki.frontend.lowertables import (
    _ARITHMETIC,
    _CALL_IDS,
    _CAST_OR_BINARY,
    _COMPARISONS,
    _IDENTIFIER_IDS,
    _LOOSE_KINDS,
    _PAREN_IDS,
    _SCALAR,
    _STRUCT_TARGETS,
    _SUBSCRIPT_ARGUMENTS_IDS,
    _TEMPLATE_ARGS,
    _tyname,
    _vector_ctor,
)
from cuda2nki.frontend.lowertables import _PRIMITIVE_IDS as _PRIMITIVE_IDS  # for unit.py
from cuda2nki.frontend.lowertex import TextureLowering
from cuda2nki.frontend.lowertypes import TypeLowering
from cuda2nki.frontend.methods import MethodLowering
from cuda2nki.frontend.packed import PackedInstance
from cuda2nki.frontend.staticmembers import static_member
from cuda2nki.frontend.stdtraits import trait_value
from cuda2nki.frontend.stmtexpr import statement_expression
from cuda2nki.frontend.structops import StructOperatorLowering
from cuda2nki.frontend.structtemplates import StructTemplateLowering
from cuda2nki.frontend.traits import TraitLowering
from cuda2nki.frontend.typesys import (
    ARITH_BY_NAME,
    BOOL,
    INT,
    INT_NAMES,
    LANES,
    LONG,
    UINT,
    ULONG,
    VOID,
    S,
    arith_result,
    float_literal,
    int_literal,
    is_arith,
    is_int,
    named_type,
    promote,
    sizeof,
    unqualified,
    with_const,
)
from cuda2nki.frontend.vartemplates import instance as var_template_instance
from cuda2nki.frontend.wmma import Fragment, WmmaLowering

if TYPE_CHECKING:
    from cuda2nki.frontend.locs import PendingLoc
    from cuda2nki.frontend.unit import UnitContext


class BodyLowerer(
    TypeLowering,
    StatementLowering,
    DeclarationLowering,
    CallLowering,
    PackedWordLowering,
    CoopLowering,
    CubLowering,
    GroupReduceLowering,
    StructOperatorLowering,
    AggregateLowering,
    LambdaLowering,
    TraitLowering,
    StructTemplateLowering,
    MethodLowering,
    WmmaLowering,
    AsyncCopyLowering,
    TextureLowering,
):
    """Lowers one function (kernel, device function or host function) to AST nodes.

    ``env`` maps template parameter names to an ``int`` (int parameter), a ``CType`` (typename
    parameter) or ``None`` (left uninstantiated).  In ``host`` mode unknown names and calls are
    accepted untyped (host code is only read for launch sites).
    """

    def __init__(
        self,
        unit: UnitContext,
        func_name: str,
        env: dict[str, int | A.CType | None] | None = None,
        host: bool = False,
    ) -> None:
        self.u = unit
        self.loc = unit.loc
        # each node built here gets ``loc=(syntax_node.byte_range, self.placer)``, a pending
        # location (what ``Placer.at`` returns, written out: one call less per node)
        self.placer = unit.placer
        self.func_name = func_name
        self.env = env or {}
        self.host = host
        # ``visible``: every name in scope -> its innermost symbol; ``scopes``: per open scope,
        # the names it declared -> their outer symbol (None: none), restored when it closes
        self.visible: dict[str, Sym] = {}
        self.scopes: list[dict[str, Sym | None]] = [{}]
        self.diags: list[Diagnostic] = []
        self.calls: list[tuple[str, SourceLoc]] = []  # (target function, call location)
        self.pending_unroll: int | None = None
        self.in_assert = False
        self.return_type: A.CType = VOID
        self.returns_ref = False  # a member function returning `T&`: returns the address
        # extern __shared__ arrays standing for shared-memory view structs, by element type
        self.smem_arrays: dict[str, A.VarDecl] = {}
        self.file_shared_used: set[str] = set()  # file-scope __shared__ names used here
        self.view_vars: set[str] = set()  # variables declared as such a struct
        self.fragments: dict[str, Fragment] = {}  # wmma fragment variables (see wmma)
        # lowering an uninstantiated template: sizes may depend on unknown parameters
        self.generic = None in self.env.values()
        self._tvalue_types: dict[str, A.ScalarType] = {}
        # the unit's bytes when this lowerer starts (``_text(node)`` without the binding's
        # slower ``node.text``; a later re-parse of another function changes no byte of ours).
        # They are UTF-8 encoded from text and nodes start and end on characters, so a node's
        # span decodes without an error handler (the plain ``decode()`` is the fast one).
        self.src = unit.src

    # ------------------------------------------------------------------ utilities

    def text(self, node: ts.Node) -> str:
        """``_text(node)`` from the bytes this lowerer reads (no copy through ``node.text``;
        every tree it is given has the unit's bytes at its nodes' offsets)."""
        return self.src[node.start_byte : node.end_byte].decode()

    def error(self, code: str, node: ts.Node | None, **fmt: object) -> None:
        loc = self.loc(node) if node is not None else self.u.unknown_loc
        self.diags.append(make(code, loc, **fmt))

    def fail(self, code: str, node: ts.Node | None, **fmt: object) -> _Placeholder:
        self.error(code, node, **fmt)
        return _Placeholder()

    def note(self, code: str, node: ts.Node, **fmt: object) -> None:
        self.diags.append(make(code, self.loc(node), **fmt))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diags if d.severity >= Severity.ERROR]

    def lookup(self, name: str) -> Sym | None:
        return self.visible.get(name)

    def declare(self, name: str, sym: Sym) -> None:
        top = self.scopes[-1]
        if name not in top:
            top[name] = self.visible.get(name)  # what the name meant before this scope
        self.visible[name] = sym

    def template_value_type(self, name: str) -> A.ScalarType:
        """The declared type of the non-type template parameter ``name`` of the function being
        lowered (``unsigned int N`` -> ``uint32``, ``size_t`` -> ``uint64``, ``bool`` ...);
        ``int32`` when it is not an integral type known here."""
        got = self._tvalue_types.get(name)
        if got is None:
            got = INT
            for fd in self.u.overloads.get(self.func_name, ()):
                pnode = next((p[3] for p in fd.template_params if p[0] == name), None)
                if pnode is None:
                    continue
                quals = tuple([c for c in pnode.children if c.kind_id in QUALIFIER_IDS])
                try:
                    ty = unqualified(self.type_of(pnode.child_by_field_id(F.type), quals))
                except _Placeholder:
                    self.diags.pop()  # the parameter's own check reports it
                    break
                if isinstance(ty, A.ScalarType) and (is_int(ty) or ty == BOOL):
                    got = ty
                break
            self._tvalue_types[name] = got
        return got

    def push_scope(self) -> None:
        self.scopes.append({})

    def pop_scope(self) -> None:
        """Leave the innermost scope: its names regain their outer meaning (or none)."""
        visible = self.visible
        for name, before in self.scopes.pop().items():
            if before is None:
                del visible[name]
            else:
                visible[name] = before

    # ------------------------------------------------------------------ constants

    def const_int_node(self, node: ts.Node) -> int | None:
        try:
            e = self.expr(node)
        except _Placeholder:
            return None
        v = self.const_value(e)
        return int(v) if isinstance(v, (int, bool)) else None

    def const_value(self, e: A.Expr) -> int | float | None:
        """Fold an integer (or float) constant expression; None when it is not constant."""
        t = type(e)
        if t is A.IntLit or t is A.FloatLit:
            return e.value
        if t is A.BoolLit:
            return int(e.value)
        if t is A.Name:
            s = self.lookup(e.name)
            return None if s is None else s.const
        if t is A.SizeOf:
            return sizeof(e.of)
        if t is A.Cast:
            v = self.const_value(e.operand)
            if v is None:
                return None
            return _convert(v, e.to)
        if t is A.Unary:
            v = self.const_value(e.operand)
            if v is None:
                return None
            op = e.op
            if op == "-":
                return _convert(-v, e.ty)
            if op == "+":
                return v
            if op == "!":
                return int(not v)
            if op == "~" and isinstance(v, int):
                return _convert(~v, e.ty)
            return None
        if t is A.Binary:
            a = self.const_value(e.left)
            if a is None:
                return None
            if e.op == "&&" and not a:
                return 0
            if e.op == "||" and a:
                return 1
            b = self.const_value(e.right)
            if b is None:
                return None
            return _fold_binary(e.op, a, b, e.ty)
        if t is A.Ternary:
            c = self.const_value(e.cond)
            if c is None:
                return None
            return self.const_value(e.then if c else e.else_)
        if t is A.Call and e.func in ("min", "max") and len(e.args) == 2:
            a, b = self.const_value(e.args[0]), self.const_value(e.args[1])
            if a is None or b is None:
                return None
            return min(a, b) if e.func == "min" else max(a, b)
        return None

    # ------------------------------------------------------------------ expressions

    def expr(self, node: ts.Node) -> A.Expr:
        # the hottest callers index _EXPR_BY_ID themselves (one call less per expression)
        return _EXPR_BY_ID[node.kind_id](self, node)

    def e_paren(self, node: ts.Node) -> A.Expr:
        inner = node.named_children
        if len(inner) == 1 and inner[0].type != "comment":
            e = inner[0]
            if e.type == "compound_statement":  # `({ int a = x; a * a; })` (see .stmtexpr)
                return statement_expression(self, node, e)
            return _EXPR_BY_ID[e.kind_id](self, e)  # the common case
        inner = [c for c in inner if c.kind_id not in COMMENT_IDS]
        if len(inner) != 1:
            raise self.fail("C2N1030", node, what=_text(node))
        return self.expr(inner[0])

    def e_number(self, node: ts.Node) -> A.Expr:
        text = self.src[node.start_byte : node.end_byte].decode()
        loc = (node.byte_range, self.placer)
        if text.isdigit() and (text[0] != "0" or len(text) == 1) and len(text) < 10:
            return N.IntLit(loc=loc, value=int(text), ty=INT)  # int_literal's common case
        if text[:1] in ("-", "+"):  # the grammar folds a sign into the literal
            inner = self._literal(text[1:].lstrip(), node, loc)
            ty = promote(inner.ty)
            return N.Unary(loc=loc, op=text[0], operand=inner, ty=ty)
        return self._literal(text, node, loc)

    def _literal(self, text: str, node: ts.Node, loc: SourceLoc | PendingLoc) -> A.Expr:
        got = int_literal(text)
        if got is not None:
            return N.IntLit(loc=loc, value=got[0], ty=got[1])
        fl = float_literal(text)
        if fl is not None:
            return N.FloatLit(loc=loc, value=fl[0], ty=fl[1])
        raise self.fail("C2N1030", node, what=f"number '{text}'")

    def e_char(self, node: ts.Node) -> A.Expr:
        body = _text(node)[1:-1]
        try:
            value = ord(body.encode().decode("unicode_escape")) if body else 0
        except (UnicodeDecodeError, TypeError):
            raise self.fail("C2N1030", node, what=f"character literal {_text(node)}") from None
        return N.IntLit(loc=(node.byte_range, self.placer), value=value, ty=S["int8"])

    def e_bool(self, node: ts.Node) -> A.Expr:
        return N.BoolLit(loc=(node.byte_range, self.placer), value=node.type == "true", ty=BOOL)

    def e_null(self, node: ts.Node) -> A.Expr:
        return N.IntLit(loc=(node.byte_range, self.placer), value=0, ty=N.PointerType(pointee=VOID))

    def e_identifier(self, node: ts.Node) -> A.Expr:
        name = self.src[node.start_byte : node.end_byte].decode()
        loc = (node.byte_range, self.placer)
        s = self.visible.get(name)  # self.lookup(name)
        if s is not None:
            if s.ty is REFUSED:  # its declaration was refused, with a diagnostic
                raise _Placeholder()
            if type(s.ty) is AggregateType and not self.agg_ok:
                if self.host:
                    return N.Name(loc=loc, ty=None, name=name)
                self.agg_refused_use(node, s.ty)
            # a group object is only meaningful as an argument, which the call drops
            ref = N.Name(loc=loc, ty=s.ty, name=name)
            if s.ref:  # a C++ reference is a pointer read through
                return N.Unary(loc=loc, op="*", operand=ref, ty=s.ty.pointee)  # type: ignore[union-attr]
            return ref
        if self.this_agg is not None:  # a member, inside a member function
            got = self.this_member(node, name)
            if got is not None:
                return got
        if name in self.env:
            v = self.env[name]
            if isinstance(v, int) and not isinstance(v, bool):
                ty = self.template_value_type(name)
                if ty == BOOL:
                    return N.BoolLit(loc=loc, value=bool(v), ty=BOOL)
                return N.IntLit(loc=loc, value=_convert(v, ty), ty=ty)
            if v is None:
                return N.Name(loc=loc, name=name, ty=self.template_value_type(name))
            if isinstance(v, A.FunctionRef):
                raise self.fail(
                    "C2N1010", node, what=f"function parameter '{name}' used other than called"
                )
            raise self.fail("C2N1030", node, what=f"type '{name}' used as a value")
        if name == "warpSize":
            return N.Builtin(loc=loc, name="warpSize", dim="", ty=INT)
        if name == "NULL":
            return N.IntLit(loc=loc, value=0, ty=N.PointerType(pointee=VOID))
        if name in self.u.file_shared and not self.host:
            got = file_shared_name(self, node, name)
            if got is None:
                raise self.fail(
                    "C2N1010", node, what=f"file-scope __shared__ variable '{name}' of this type"
                )
            return got
        g = self.u.globals.get(name)
        if g is not None:
            if type(g) is AggregateType and not self.agg_ok and not self.host:
                self.agg_refused_use(node, g)
            return N.Name(loc=loc, name=name, ty=g)
        c = self.u.consts.get(name)
        if c is not None:
            value, ty = c
            if isinstance(value, float):
                return N.FloatLit(loc=loc, value=value, ty=ty)
            return N.IntLit(loc=loc, value=value, ty=ty)
        k = KNOWN_CONSTANTS.get(name)
        if k is not None:
            value, tname = k
            if isinstance(value, float):
                return N.FloatLit(loc=loc, value=value, ty=S[tname])
            return N.IntLit(loc=loc, value=value, ty=S[tname])
        if self.host:
            return N.Name(loc=loc, name=name, ty=None)
        raise self.fail("C2N1020", node, name=name)

    def e_qualified(self, node: ts.Node) -> A.Expr:
        trait = trait_value(self, node)  # `std::is_same_v<T, int>`, `is_integral<T>::value`
        if trait is not None:
            return trait
        text = _text(node).replace(" ", "")
        parts = text.split("::")
        if parts[0] in ("", "std") and len(parts) == 2:
            fake = node.child_by_field_id(F.name)
            if fake is not None and fake.type == "identifier":
                return self.e_identifier(fake)
        k = _numeric_limit(text, self.limits_type)
        if k is not None:
            return k(self.loc(node))
        c = self.u.consts.get(text.lstrip(":"))
        if c is None and "<" in text:  # `AsianOption<Real>::Put`: an enum of a class template
            c = self.u.consts.get(_TEMPLATE_ARGS.sub("", text).lstrip(":"))
        if c is not None:  # `Mode::Relu`, `cfg::ROWS`: an enumerator or a namespace constant
            value, ty = c
            loc = (node.byte_range, self.placer)
            if isinstance(value, float):
                return N.FloatLit(loc=loc, value=value, ty=ty)
            return N.IntLit(loc=loc, value=value, ty=ty)
        got = static_member(self, node) if self.u.static_structs else None
        if got is not None:  # `Cfg::kThreads`: a traits struct's constant (see .staticmembers)
            loc = (node.byte_range, self.placer)
            if isinstance(got[0], float):
                return N.FloatLit(loc=loc, value=got[0], ty=got[1])
            return N.IntLit(loc=loc, value=got[0], ty=got[1])
        packed = self._packed_static(node) or var_template_instance(self, node)
        if packed is not None:
            return packed
        if self.host:
            return N.Name(loc=(node.byte_range, self.placer), name=text, ty=None)
        raise self.fail("C2N1020", node, name=text)

    def _packed_fill_call(
        self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """``f128::zeros()`` / ``Packed128<T>::constant(v)``: a packed vector with every lane
        the value (see :class:`~cuda2nki.frontend.packed.PackedStruct`), else None."""
        scope, name = fn.child_by_field_id(F.scope), fn.child_by_field_id(F.name)
        if name is None or name.type != "identifier":
            return None
        t, inst = self._packed_scope(scope)
        if inst is None:
            return None
        method = _text(name)
        filled = dict(inst.struct.filled)
        if method in inst.struct.fills and len(arg_nodes) == 1:
            value = self.expr(arg_nodes[0])
        elif method in filled and not arg_nodes:
            value = self.expr(filled[method])
        else:
            return None
        loc = (node.byte_range, self.placer)
        return _vector_ctor(t, (value,) * t.width, loc)

    def _packed_scope(self, scope: ts.Node | None) -> tuple[A.CType | None, PackedInstance | None]:
        """``(type, instance)`` of the packed vector struct a qualified name's scope names
        (``Packed128<T>::``, ``x128::``); ``(None, None)`` for any other scope."""
        if scope is None:
            return None, None
        if scope.type == "template_type":
            if _text(scope.child_by_field_id(F.name)) not in self.u.packed:
                return None, None
            t = self.type_of(scope)
        elif scope.type in ("namespace_identifier", "type_identifier"):
            t = self._named(_text(scope), scope)
        else:
            return None, None
        return t, self.packed_of(t)

    def _packed_static(self, node: ts.Node) -> A.Expr | None:
        """``x128::size`` / ``Packed128<T>::size``: a static member of a packed vector struct."""
        scope, name = node.child_by_field_id(F.scope), node.child_by_field_id(F.name)
        if name is None or name.type != "identifier":
            return None
        _, inst = self._packed_scope(scope)
        got = inst.static(_text(name)) if inst is not None else None
        if got is None:
            return None
        return N.IntLit(loc=(node.byte_range, self.placer), value=got[0], ty=got[1])

    def e_field(self, node: ts.Node) -> A.Expr:
        kids = node.children
        if len(kids) == 3:  # argument, operator, field (no `template`, no comment)
            arg, op_node, fnode = kids
        else:
            arg = node.child_by_field_id(F.argument)
            op_node = node.child_by_field_id(F.operator)
            fnode = node.child_by_field_id(F.field)
        src = self.src
        field = src[fnode.start_byte : fnode.end_byte].decode()
        op = KIND_NAMES[op_node.kind_id]
        loc = (node.byte_range, self.placer)
        arg_kind = arg.kind_id
        if self.fragments and op == ".":  # `frag.x`, `frag.num_elements` of a wmma fragment
            got = self.fragment_member(node, arg, field)
            if got is not None:
                return got
        if self.this_agg is not None and op == "->" and arg.type == "this":  # `this->m`
            got = self.this_member(fnode, field)
            if got is None:
                raise self.fail("C2N1030", node, what=f"member '{field}' of '{self.this_agg.name}'")
            return got
        if arg_kind in _IDENTIFIER_IDS:
            name = src[arg.start_byte : arg.end_byte].decode()
            if name in BUILTIN_DIM3 and self.visible.get(name) is None:
                if field not in ("x", "y", "z") or op != ".":
                    raise self.fail("C2N1030", node, what=f"{name}.{field}")
                return N.Builtin(loc=loc, name=name, dim=field, ty=UINT)
        if arg_kind in _CALL_IDS:  # block.group_index().x and friends
            fn = arg.child_by_field_id(F.function)
            if fn is not None and fn.type == "field_expression":
                obj = fn.child_by_field_id(F.argument)
                meth = _text(fn.child_by_field_id(F.field))
                s = self.lookup(_text(obj)) if obj.type == "identifier" else None
                dim3 = {
                    "group_index": "blockIdx",
                    "thread_index": "threadIdx",
                    "group_dim": "blockDim",
                    "dim_threads": "blockDim",
                }
                if s is not None and s.cg == "block" and meth in dim3 and field in ("x", "y", "z"):
                    return N.Builtin(loc=loc, name=dim3[meth], dim=field, ty=UINT)
                if s is not None and s.cg == "grid" and meth in GRID_DIM3 and field in "xyz":
                    return N.Builtin(loc=loc, name=GRID_DIM3[meth], dim=field, ty=UINT)
        base = self.agg_value(arg) if op == "." else self.expr(arg)
        bt = base.ty
        if type(bt) is AggregateType:
            return self.agg_member(node, base, field)
        mem = self.blob_struct(bt.pointee if op == "->" and type(bt) is A.PointerType else bt)
        if mem is not None:  # a struct in memory: `p->m`, `p[i].m`
            ptr = base if op == "->" else address_of(base)
            return self.mem_member(node, ptr, mem, field)
        if op == "->":
            bt = bt.pointee if isinstance(bt, A.PointerType) else None
        inst = self.packed_of(bt)
        if inst is not None and op == ".":
            if field == inst.struct.member:  # v.payload: the vector itself, indexed as v[k]
                return base
            got = inst.static(field)
            if got is not None:
                return N.IntLit(loc=loc, value=got[0], ty=got[1])
        if type(bt) is A.VectorType and bt.name in self.u.record_fields:
            return self._record_member(node, base, bt, field, op == "->")
        if isinstance(bt, A.VectorType) and field in LANES and LANES[field] < bt.width:
            return N.Member(
                loc=loc, base=base, field=field, arrow=op == "->", ty=with_const(bt.base, bt.const)
            )
        if self.host:
            return N.Member(loc=loc, base=base, field=field, arrow=op == "->", ty=None)
        dep = bt.pointee if op == "->" and isinstance(bt, A.PointerType) else bt
        if isinstance(dep, A.OpaqueType) and dep.name in self.u.dependent_types:  # `S<T>::X`
            ty = N.OpaqueType(name=f"{bt.name}::{field}")
            return N.Member(loc=loc, base=base, field=field, arrow=op == "->", ty=ty)
        raise self.fail("C2N1030", node, what=f"member '{field}' of {_tyname(base.ty)}")

    def _record_member(
        self, node: ts.Node, base: A.Expr, bt: A.VectorType, field: str, arrow: bool
    ) -> A.Expr:
        """``s.member`` / ``p->member`` of a record struct: the member's lane (``.x``..``.w`` up
        to four members, ``[k]`` beyond; see :mod:`cuda2nki.frontend.records`)."""
        fields = self.u.record_fields[bt.name]
        if field not in fields:
            raise self.fail("C2N1030", node, what=f"member '{field}' of {bt.name}")
        lane = fields.index(field)
        loc = (node.byte_range, self.placer)
        ty = with_const(bt.base, bt.const)
        if bt.width <= 4:
            return N.Member(loc=loc, base=base, field="xyzw"[lane], arrow=arrow, ty=ty)
        if arrow:
            base = N.Unary(loc=loc, op="*", operand=base, ty=bt)
        return N.Index(loc=loc, base=base, index=N.IntLit(loc=loc, value=lane, ty=INT), ty=ty)

    def e_subscript(self, node: ts.Node) -> A.Expr:
        kids = node.children
        idx_node = None
        if len(kids) == 2 and kids[1].kind_id in _SUBSCRIPT_ARGUMENTS_IDS:
            ik = kids[1].children
            if len(ik) == 3:  # '[' index ']'
                idx_node = ik[1]
        if idx_node is None:
            idx_list = node.child_by_field_id(F.indices) or node.child_by_field_name("index")
            idx_nodes = (
                [c for c in idx_list.named_children if c.kind_id not in COMMENT_IDS]
                if idx_list
                else []
            )
            if idx_list is not None and idx_list.type != "subscript_argument_list":
                idx_nodes = [idx_list]
            if len(idx_nodes) != 1:
                raise self.fail("C2N1030", node, what="subscript with several indices")
            idx_node = idx_nodes[0]
        b_node = kids[0]
        base = self.agg_value(b_node) if self.u.methods else self.expr(b_node)
        if self.u.methods and not self.host:  # `s[i]`: the struct's operator[] (see .methods)
            got = self.object_leaves(node, base, False)
            if got is not None and self.has_method(got[0].name, "operator[]"):
                return self.method_call(node, got[0], got[1], "operator[]", [idx_node], b_node)
            if type(base.ty) is AggregateType:
                self.agg_refused_use(b_node, base.ty)
        index = _EXPR_BY_ID[idx_node.kind_id](self, idx_node)
        bt = base.ty
        tb = type(bt)
        if tb is A.PointerType:
            ty = bt.pointee
        elif tb is A.ArrayType:
            ty = bt.elem if len(bt.dims) == 1 else N.ArrayType(elem=bt.elem, dims=bt.dims[1:])
        elif self.packed_of(bt) is not None:  # operator[] of a packed vector struct: lane k
            ty = with_const(bt.base, bt.const)
        elif self.host or tb is A.OpaqueType:
            ty = None
        else:
            raise self.fail("C2N1030", node, what=f"subscript of {_tyname(bt)}")
        it = index.ty
        if (
            it is not None
            and not (type(it) is _SCALAR and it.name in INT_NAMES)  # is_int(it), inlined
            and not self.host
            and type(it) is not A.OpaqueType
        ):
            raise self.fail("C2N1030", idx_node, what=f"array index of type {_tyname(it)}")
        return N.Index(loc=(node.byte_range, self.placer), ty=ty, base=base, index=index)

    def e_unary(self, node: ts.Node) -> A.Expr:
        op = KIND_NAMES[node.child_by_field_id(F.operator).kind_id]
        operand = self.expr(node.child_by_field_id(F.argument))
        loc = (node.byte_range, self.placer)
        t = operand.ty
        if op == "!":
            ty = BOOL
        elif op in ("-", "+", "~"):
            ty = promote(t) if is_arith(t) else t
        else:
            raise self.fail("C2N1030", node, what=f"unary operator {op}")
        return N.Unary(loc=loc, op=op, operand=operand, ty=ty)

    def e_pointer(self, node: ts.Node) -> A.Expr:
        op = KIND_NAMES[node.child_by_field_id(F.operator).kind_id]
        arg = node.child_by_field_id(F.argument)
        if op == "*" and self.u.methods and not self.host:  # `*obj`: its operator*
            operand = self.agg_value(arg)
            got = self.struct_deref(node, operand, arg)
            if got is not None:
                return got
        else:
            operand = self.expr(arg)
        t = operand.ty
        if op == "*":
            if isinstance(t, A.PointerType):
                ty = t.pointee
            elif isinstance(t, A.ArrayType):
                ty = t.elem if len(t.dims) == 1 else N.ArrayType(elem=t.elem, dims=t.dims[1:])
            elif self.host:
                ty = None
            else:
                raise self.fail("C2N1030", node, what=f"dereference of {_tyname(t)}")
        else:
            ty = N.PointerType(pointee=t) if t is not None else None
        return N.Unary(loc=(node.byte_range, self.placer), op=op, operand=operand, ty=ty)

    def e_update(self, node: ts.Node) -> A.Expr:
        op_node = node.child_by_field_id(F.operator)
        arg = node.child_by_field_id(F.argument)
        pre = op_node.start_byte < arg.start_byte
        operand = self.expr(arg)
        op = ("pre" if pre else "post") + op_node.type
        return N.Unary(
            loc=(node.byte_range, self.placer), op=op, operand=operand, ty=unqualified(operand.ty)
        )

    def _misparsed_binary(
        self, node: ts.Node, left: ts.Node, op: str, right: ts.Node
    ) -> A.Expr | None:
        """``(real) *p`` / ``(T) -x`` / ``(T) &v``: the grammar reads a cast to a typedef'd
        type as a binary operator; when the parenthesised name is a type and not a variable,
        and the right operand binds tighter than any binary operator, it is the cast of the
        unary ``op`` applied to that operand."""
        kids = [c for c in left.named_children if c.kind_id not in COMMENT_IDS]
        if self.host or len(kids) != 1 or kids[0].type != "identifier":
            return None
        name = _text(kids[0])
        if self.lookup(name) is not None or name in self.u.globals or name in self.u.consts:
            return None
        to = self._named_quietly(name)
        if to is None or right.type in _LOOSE_KINDS:
            return None
        operand = self.expr(right)
        if op == "*":
            return self._cast_of(node, to, self._deref_of(right, operand))
        if op == "&":
            return self._cast_of(node, to, address_of(operand))
        unary = N.Unary(loc=self.loc(right), op=op, operand=operand, ty=operand.ty)
        return self._cast_of(node, to, unary)

    def _deref_of(self, node: ts.Node, operand: A.Expr) -> A.Expr:
        pt = operand.ty
        if isinstance(pt, A.PointerType):
            ty = pt.pointee
        elif isinstance(pt, A.ArrayType):
            ty = pt.elem if len(pt.dims) == 1 else N.ArrayType(elem=pt.elem, dims=pt.dims[1:])
        else:
            raise self.fail("C2N1030", node, what=f"dereference of {_tyname(pt)}")
        return N.Unary(loc=self.loc(node), op="*", operand=operand, ty=ty)

    def _cast_of(self, node: ts.Node, to: A.CType, operand: A.Expr) -> A.Expr:
        return N.Cast(
            loc=(node.byte_range, self.placer), to=to, operand=operand, kind="c", ty=unqualified(to)
        )

    def _check_misparsed_cast(self, node: ts.Node) -> None:
        """``(lo) && (x)`` (a macro's parenthesised arguments) reads as the cast ``(lo)&&(x)``
        when ``lo`` is a variable, and ``(p[i]) + 32`` as a cast of ``+32`` to the array type
        ``p[i]``: ask the caller to re-parse with those parentheses blanked."""
        t = node.child_by_field_id(F.type)
        if self.host or t is None or t.type != "type_descriptor":
            return
        decl = t.child_by_field_id(F.declarator)
        if len(t.named_children) != (1 if decl is None else 2) or not _subscripts_only(decl):
            return
        name_node = t.child_by_field_id(F.type)
        if name_node is None or name_node.type != "type_identifier":
            return
        n = _text(name_node)
        s = self.lookup(n)
        is_value = (s is not None and not s.cg) or n in self.u.globals or n in self.u.consts
        if not is_value or self._named_quietly(n) is not None:
            return
        kids = node.children
        if kids and kids[0].type == "(" and kids[1:2] and kids[2].type == ")":
            raise Reparse(kids[0].start_byte, kids[2].start_byte)

    def _named_quietly(self, name: str) -> A.CType | None:
        """The type ``name`` names, without reporting anything (None: not a type)."""
        if name in self.env:
            v = self.env[name]
            return None if isinstance(v, int | A.FunctionRef) else v or N.OpaqueType(name=name)
        return named_type(name) or self.u.typedefs.get(name) or self.u.records.get(name)

    def _check_misparsed_less(self, node: ts.Node) -> None:
        """``a < b && c > d`` can read as a template ``a<b && c>``: when ``a`` is a variable,
        ask the caller to re-parse with that ``<`` respelled (see :class:`Reparse`)."""
        name = node.child_by_field_id(F.name)
        args = node.child_by_field_id(F.arguments)
        if self.host or name is None or args is None or name.type != "identifier":
            return
        n = _text(name)
        s = self.lookup(n)
        is_value = (s is not None and not s.cg) or n in BUILTIN_DIM3 or n in self.u.globals
        is_value = is_value or n in self.u.consts or isinstance(self.env.get(n, ""), int)
        if is_value and n not in self.u.functions:
            raise Reparse(args.start_byte)

    def e_binary(self, node: ts.Node) -> A.Expr:
        kids = node.children
        if len(kids) == 3:  # left, operator, right (no comments in between)
            left_node, op_node, right_node = kids
        else:
            op_node = node.child_by_field_id(F.operator)
            left_node = node.child_by_field_id(F.left)
            right_node = node.child_by_field_id(F.right)
        op = KIND_NAMES[op_node.kind_id]
        override = self.u.op_override
        if override:
            op = override.get(op_node.start_byte, op)
        if op in _CAST_OR_BINARY and left_node.kind_id in _PAREN_IDS:
            cast = self._misparsed_binary(node, left_node, op, right_node)
            if cast is not None:
                return cast
        if self.u.aggregates and not self.host:
            left = self.operand(left_node)  # `a * b` of structs: see .structops
            right = self.operand(right_node)
            if type(left.ty) is AggregateType or type(right.ty) is AggregateType:
                return self.operand_operator(node, op, left, right, [left_node, right_node])
        else:
            left = _EXPR_BY_ID[left_node.kind_id](self, left_node)
            right = _EXPR_BY_ID[right_node.kind_id](self, right_node)
        if (type(left.ty) is A.VectorType or type(right.ty) is A.VectorType) and not self.host:
            got = self.struct_operator(node, op, left, right)  # `u * v`: operator*(u, v)
            if got is not None:
                return got
        if op in _COMPARISONS:  # _binary_type's first case, inlined: hot
            ty = BOOL
        else:
            lt, rt = left.ty, right.ty
            if type(lt) is _SCALAR and type(rt) is _SCALAR and op in _ARITHMETIC:
                # _binary_type's second case (arith_result's table, read directly): hot
                ty = ARITH_BY_NAME.get((lt.name, rt.name)) or arith_result(lt, rt)
            else:
                ty = self._binary_type(op, lt, rt, node)
        return N.Binary(loc=(node.byte_range, self.placer), ty=ty, op=op, left=left, right=right)

    def _binary_type(
        self, op: str, lt: A.CType | None, rt: A.CType | None, node: ts.Node
    ) -> A.CType | None:
        if op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
            return BOOL
        if type(lt) is _SCALAR and type(rt) is _SCALAR and op in ("+", "-", "*", "/"):
            return arith_result(lt, rt)  # what the checks below come to for two scalars
        lp = isinstance(lt, (A.PointerType, A.ArrayType))
        rp = isinstance(rt, (A.PointerType, A.ArrayType))
        if lp or rp:
            if op == "-" and lp and rp:
                return LONG
            if op in ("+", "-"):
                p = lt if lp else rt
                return N.PointerType(pointee=p.elem) if isinstance(p, A.ArrayType) else p
            if not self.host:
                raise self.fail("C2N1030", node, what=f"operator {op} on a pointer")
            return None
        if op in ("<<", ">>"):
            return promote(lt)
        if isinstance(lt, A.VectorType) or isinstance(rt, A.VectorType):
            vt = lt if isinstance(lt, A.VectorType) else rt
            return unqualified(vt)
        if op in ("%", "&", "|", "^") and not self.host:
            if (lt is not None and not is_int(lt) and not isinstance(lt, A.OpaqueType)) or (
                rt is not None and not is_int(rt) and not isinstance(rt, A.OpaqueType)
            ):
                raise self.fail("C2N1030", node, what=f"operator {op} on a floating-point value")
        return arith_result(lt, rt)

    def e_assign(self, node: ts.Node) -> A.Expr:
        kids = node.children
        if len(kids) == 3:  # left, operator, right (no comments in between)
            t_node, op_node, v_node = kids
        else:
            op_node = node.child_by_field_id(F.operator)
            t_node = node.child_by_field_id(F.left)
            v_node = node.child_by_field_id(F.right)
        op = KIND_NAMES[op_node.kind_id]
        if self.names_bit_field(t_node):  # `s.bits = v`, `p->bits |= v`
            return self.bit_store(node, op, _EXPR_BY_ID[v_node.kind_id](self, v_node))
        if op == "=" and t_node.type in _STRUCT_TARGETS and not self.host:
            target = self.agg_value(t_node)
            mem = self.blob_struct(target.ty)
            if mem is not None and v_node.type != "initializer_list":
                value = self.agg_value(v_node)
                if type(value.ty) is AggregateType:  # `p[i] = s;`: member by member
                    pairs = zip(self.mem_leaves(node, target, mem), self.agg_leaves(v_node, value))
                    loc = (node.byte_range, self.placer)
                    exprs = tuple(
                        N.Assign(loc=loc, op="=", target=t, value=v, ty=unqualified(t.ty))
                        for t, v in pairs
                    )
                    return N.Comma(loc=loc, exprs=exprs, ty=VOID)
                return N.Assign(
                    loc=(node.byte_range, self.placer),
                    op="=",
                    target=target,
                    value=value,
                    ty=unqualified(target.ty),
                )
            if type(target.ty) is AggregateType:  # s = t; s = f(x);: member by member
                stmts = self.agg_store(node, target, v_node)  # type: ignore[arg-type]
                exprs = tuple(st.expr for st in stmts)  # type: ignore[attr-defined]
                return N.Comma(loc=(node.byte_range, self.placer), exprs=exprs, ty=VOID)
        else:
            target = _EXPR_BY_ID[t_node.kind_id](self, t_node)
        vec = self._word_of(v_node) if op == "=" and v_node.kind_id in _CALL_IDS else None
        if vec is not None:  # `*reinterpret_cast<int4*>(p) = v.get_bits()`: store the vector
            return self._packed_store(node, target, vec)
        value = _EXPR_BY_ID[v_node.kind_id](self, v_node)
        if not isinstance(target, (A.Name, A.Index, A.Member, A.Unary)) or (
            isinstance(target, A.Unary) and target.op != "*"
        ):
            raise self.fail("C2N1030", node, what="assignment to something that is not a variable")
        return N.Assign(
            loc=(node.byte_range, self.placer),
            op=op,
            target=target,
            value=value,
            ty=unqualified(target.ty),
        )

    def e_conditional(self, node: ts.Node) -> A.Expr:
        cond = self.expr(node.child_by_field_id(F.condition))
        then = self.expr(node.child_by_field_id(F.consequence))
        else_ = self.expr(node.child_by_field_id(F.alternative))
        if is_arith(then.ty) and is_arith(else_.ty):
            ty = arith_result(then.ty, else_.ty)
            if then.ty == else_.ty or unqualified(then.ty) == unqualified(else_.ty):
                ty = unqualified(then.ty)
        else:
            ty = unqualified(then.ty if then.ty is not None else else_.ty)
        return N.Ternary(
            loc=(node.byte_range, self.placer), cond=cond, then=then, else_=else_, ty=ty
        )

    def e_cast(self, node: ts.Node) -> A.Expr:
        self._check_misparsed_cast(node)
        to = self.type_descriptor(node.child_by_field_id(F.type))
        operand = self.expr(node.child_by_field_id(F.value))
        return N.Cast(
            loc=(node.byte_range, self.placer), to=to, operand=operand, kind="c", ty=unqualified(to)
        )

    def e_sizeof(self, node: ts.Node) -> A.Expr:
        t = node.child_by_field_id(F.type)
        if t is not None:
            of = self.type_descriptor(t)
        else:
            v = node.child_by_field_id(F.value)
            inner = v
            while inner is not None and inner.type == "parenthesized_expression":
                kids = [c for c in inner.named_children if c.kind_id not in COMMENT_IDS]
                inner = kids[0] if len(kids) == 1 else None
            of = None
            if (
                inner is not None
                and inner.type == "identifier"
                and self.lookup(_text(inner)) is None
            ):
                of = self._named(_text(inner), inner)  # sizeof(float4), sizeof(T)
            if of is None:
                of = self.expr(v).ty
        if isinstance(of, AggregateType):
            of = self.blob_of(of, node)
        if sizeof(of) is None and not (self.generic and isinstance(of, A.OpaqueType)):
            raise self.fail("C2N1030", node, what="sizeof of an incomplete type")
        return N.SizeOf(loc=(node.byte_range, self.placer), of=of, ty=ULONG)

    def e_alignof(self, node: ts.Node) -> A.Expr:
        """``alignof(float4)``, ``alignof(T)``: the type's C alignment, a constant."""
        t = node.child_by_field_id(F.type) or next(
            (c for c in node.named_children if c.type == "type_descriptor"), None
        )
        if t is None:
            raise self.fail("C2N1030", node, what="alignof of an expression")
        of = self.type_descriptor(t)
        n = align_of(of)
        if n is None:
            raise self.fail("C2N1030", node, what="alignof of an incomplete type")
        return N.IntLit(loc=(node.byte_range, self.placer), value=n, ty=ULONG)

    def e_comma(self, node: ts.Node) -> A.Expr:
        items: list[A.Expr] = []
        n = node
        while n.type == "comma_expression":
            items.append(self.expr(n.child_by_field_id(F.left)))
            n = n.child_by_field_id(F.right)
        items.append(self.expr(n))
        return N.Comma(loc=(node.byte_range, self.placer), exprs=tuple(items), ty=items[-1].ty)

    def e_init_list(self, node: ts.Node) -> A.Expr:
        return self._init_list(node, None)

    def e_template_function(self, node: ts.Node) -> A.Expr:
        trait = trait_value(self, node)  # `is_same_v<T, float>` (using namespace std)
        if trait is not None:
            return trait
        self._check_misparsed_less(node)
        # `kEmpty<int>` (see .vartemplates), `mask<T>` in device memory (.globaltemplates)
        value = var_template_instance(self, node) or global_template_instance(self, node)
        if value is not None:
            return value
        if self.host:
            return N.Name(loc=(node.byte_range, self.placer), name=_text(node), ty=None)
        raise self.fail("C2N1010", node, what=f"template name '{_text(node)}' used as a value")

    def e_string(self, node: ts.Node) -> A.Expr:
        if self.host:
            return N.Name(loc=(node.byte_range, self.placer), name=_text(node), ty=None)
        if self.in_assert:  # assert(cond && "message"): a string is a non-null pointer
            return N.BoolLit(loc=(node.byte_range, self.placer), value=True, ty=BOOL)
        raise self.fail("C2N1010", node, what="string literal")


STMT_HANDLERS: dict[str, Callable[[BodyLowerer, ts.Node], list[A.Stmt]]] = {
    "compound_statement": BodyLowerer.s_compound,
    "expression_statement": BodyLowerer.s_expression,
    "declaration": BodyLowerer.s_declaration,
    "if_statement": BodyLowerer.s_if,
    "for_statement": BodyLowerer.s_for,
    "while_statement": BodyLowerer.s_while,
    "do_statement": BodyLowerer.s_do,
    "switch_statement": BodyLowerer.s_switch,
    "break_statement": BodyLowerer.s_break,
    "continue_statement": BodyLowerer.s_continue,
    "return_statement": BodyLowerer.s_return,
    "labeled_statement": BodyLowerer.s_labeled,
    "using_declaration": BodyLowerer.s_ignore,
    "namespace_alias_definition": BodyLowerer.s_ignore,
    "preproc_call": BodyLowerer.s_preproc_call,
    "attributed_statement": BodyLowerer.s_attributed,
    "comment": BodyLowerer.s_ignore,
    "static_assert_declaration": BodyLowerer.s_ignore,
    "type_definition": BodyLowerer.s_typedef,
    "alias_declaration": BodyLowerer.s_typedef,
}

EXPR_HANDLERS: dict[str, Callable[[BodyLowerer, ts.Node], A.Expr]] = {
    "parenthesized_expression": BodyLowerer.e_paren,
    "number_literal": BodyLowerer.e_number,
    "char_literal": BodyLowerer.e_char,
    "true": BodyLowerer.e_bool,
    "false": BodyLowerer.e_bool,
    "null": BodyLowerer.e_null,
    "identifier": BodyLowerer.e_identifier,
    "qualified_identifier": BodyLowerer.e_qualified,
    "field_expression": BodyLowerer.e_field,
    "subscript_expression": BodyLowerer.e_subscript,
    "unary_expression": BodyLowerer.e_unary,
    "pointer_expression": BodyLowerer.e_pointer,
    "update_expression": BodyLowerer.e_update,
    "binary_expression": BodyLowerer.e_binary,
    "assignment_expression": BodyLowerer.e_assign,
    "conditional_expression": BodyLowerer.e_conditional,
    "cast_expression": BodyLowerer.e_cast,
    "sizeof_expression": BodyLowerer.e_sizeof,
    "alignof_expression": BodyLowerer.e_alignof,
    "comma_expression": BodyLowerer.e_comma,
    "initializer_list": BodyLowerer.e_init_list,
    "call_expression": BodyLowerer.e_call,
    "compound_literal_expression": BodyLowerer.e_compound_literal,
    "template_function": BodyLowerer.e_template_function,
    "string_literal": BodyLowerer.e_string,
    "concatenated_string": BodyLowerer.e_string,
    "raw_string_literal": BodyLowerer.e_string,
}


def _subscripts_only(decl: ts.Node | None) -> bool:
    """Whether the abstract declarator ``decl`` is nothing or only ``[...]`` (a subscript of a
    variable misread as an array type)."""
    while decl is not None:
        if decl.type != "abstract_array_declarator":
            return False
        decl = decl.child_by_field_id(F.declarator)
    return True


def _by_kind_id(table: dict[str, Callable], other: Callable | None) -> list[Callable | None]:
    """``table`` indexed by grammar symbol id (``node.kind_id``): every symbol whose name has a
    handler gets it (aliases share a name), so dispatch needs no string hashing.  Every other
    symbol id (ids are 16-bit; ERROR is 0xFFFF) gets ``other``."""
    lang = language()
    out = [other] * 0x10000
    for i in range(lang.node_kind_count):
        out[i] = table.get(lang.node_kind_for_id(i) or "", other)
    return out


def _refuse_expr(self: BodyLowerer, node: ts.Node) -> A.Expr:
    self._refuse(node)  # raises
    raise AssertionError("unreachable")


_EXPR_BY_ID = _by_kind_id(EXPR_HANDLERS, _refuse_expr)
_STMT_BY_ID = _by_kind_id(STMT_HANDLERS, None)
#: the dispatch tables, for the mixins (which cannot import this module at load time)
BodyLowerer._expr_by_id = _EXPR_BY_ID
BodyLowerer._stmt_by_id = _STMT_BY_ID
