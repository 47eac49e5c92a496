"""Lowering of one function body (tree-sitter CST) to the typed CUDA AST.

:class:`BodyLowerer` walks statements and expressions through two handler tables keyed by node
type (``STMT_HANDLERS`` and ``EXPR_HANDLERS``); node kinds that may appear in a body but are
refused are listed in :mod:`cuda2nki.frontend.nodekinds` with their rule id.  Errors are
collected (the construct is replaced by a placeholder so that lowering carries on and reports
everything); a function with any error is rejected by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import Diagnostic, Severity, SourceLoc, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend import intrinsics as I
from cuda2nki.frontend.aggcopy import plain_memcpy, struct_memcpy
from cuda2nki.frontend.aggregates import AggregateLowering, AggregateType, align_of
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.asynccopy import ASYNC_CALLS, SYNC_METHODS, AsyncCopyLowering
from cuda2nki.frontend.autoret import note_return
from cuda2nki.frontend.coalesced import MASKED, declare_masked
from cuda2nki.frontend.constants import KNOWN_CONSTANTS
from cuda2nki.frontend.constfold import convert as _convert
from cuda2nki.frontend.constfold import fold_binary as _fold_binary
from cuda2nki.frontend.constfold import numeric_limit as _numeric_limit
from cuda2nki.frontend.coop import CG_NOOP, CoopLowering
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    KIND_NAMES,
    PRIMITIVE_IDS,
    QUALIFIER_IDS,
    STORAGE_CLASS_IDS,
    F,
    kind_ids,
    language,
)
from cuda2nki.frontend.cubblock import CubLowering
from cuda2nki.frontend.cucomplex import COMPLEX_HELPERS, ComplexCallError, complex_call
from cuda2nki.frontend.devlaunch import (
    DEVICE_RUNTIME_CALLS,
    DEVICE_RUNTIME_TYPES,
    device_launch,
    runtime_call,
)
from cuda2nki.frontend.gridgroup import GRID_DIM3
from cuda2nki.frontend.groupreduce import GroupReduceLowering
from cuda2nki.frontend.lambdas import LambdaLowering
from cuda2nki.frontend.lowerbase import (
    BUILTIN_DIM3,
    CG_NAMESPACES,
    TEXTURE_TYPES,
    Reparse,
    Sym,
    _Placeholder,
    _text,
    address_of,
    is_lvalue,
)
from cuda2nki.frontend.methods import MethodLowering
from cuda2nki.frontend.nodekinds import REJECTED_KINDS
from cuda2nki.frontend.packed import PackedInstance, PackedStruct
from cuda2nki.frontend.structops import StructOperatorLowering
from cuda2nki.frontend.structtemplates import StructTemplateLowering
from cuda2nki.frontend.traits import TraitLowering
from cuda2nki.frontend.typesys import (
    ARITH_BY_NAME,
    BOOL,
    DOUBLE,
    FLOAT,
    INT,
    INT_NAMES,
    LANES,
    LONG,
    NAMED_TYPES,
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
from cuda2nki.frontend.wmma import Fragment, WmmaLowering, is_fragment_type

_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")  # one level of template arguments

if TYPE_CHECKING:
    from cuda2nki.frontend.locs import PendingLoc
    from cuda2nki.frontend.unit import UnitContext


class BodyLowerer(
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

    # ------------------------------------------------------------------ types

    def type_of(self, type_node: ts.Node | None, quals: tuple[ts.Node, ...] = ()) -> A.CType:
        """Resolve a type specifier node (primitive_type, sized_type_specifier, type_identifier...)."""
        const = False
        for q in quals:  # _text(q) in ("const", "constexpr"), from the bytes (hot)
            if self.src[q.start_byte : q.end_byte] in (b"const", b"constexpr"):
                const = True
                break
        if type_node is None:
            raise self.fail("C2N1022", quals[0] if quals else None, name="<none>")
        if type_node.kind_id in _PRIMITIVE_IDS:  # the common case first (same result)
            # named_type(...), without its call
            t = NAMED_TYPES.get(self.src[type_node.start_byte : type_node.end_byte].decode())
            if t is not None:
                return with_const(t, True) if const else t  # with_const(t, False) is t
        kind = type_node.type
        if kind == "type_descriptor":
            return self.type_descriptor(type_node)
        refused = self._refused_type(type_node)
        if refused is not None:
            return refused
        if kind == "primitive_type":
            t = named_type(self.src[type_node.start_byte : type_node.end_byte].decode())
        elif kind == "sized_type_specifier":
            words = [_text(c) for c in type_node.children]
            t = self._sized(words)
        elif kind == "type_identifier":
            name = _text(type_node)
            t = self._named(name, type_node)
        elif kind == "dependent_type":  # `typename vec4<T>::Type`
            t = self.trait_type(type_node) if self.u.traits else None
        elif kind == "qualified_identifier":
            t = self._std_constant_type(type_node)
            if t is None and self.u.traits:
                t = self.trait_type(type_node)
            if t is None:
                name = _text(type_node).split("::")[-1].strip()
                t = self._named(name, type_node)
        elif kind in ("placeholder_type_specifier", "auto"):
            return N.OpaqueType(name="auto", const=const)
        elif kind == "template_type":
            t = self.struct_instance(type_node) if self.u.struct_templates else None
            if t is None:
                t = self._packed_template(type_node)
        elif kind in ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier"):
            if kind == "enum_specifier":
                return with_const(INT, const)
            tag = type_node.child_by_field_id(F.name)
            rec = self.u.records.get(_text(tag)) if tag is not None else None
            if rec is not None:
                return with_const(rec, const)
            agg = self.aggregate_type(_text(tag), type_node) if tag is not None else None
            if agg is not None:
                return with_const(self.held_type(agg, type_node), const)  # type: ignore[arg-type]
            raise self.fail("C2N1025", type_node, what=_text(type_node).split("{")[0].strip())
        else:
            raise self.fail("C2N1022", type_node, name=_text(type_node))
        if t is None:
            name = _text(type_node)
            if name.split("::")[-1].split("<")[0].strip() in self.u.structs:
                raise self.fail("C2N1025", type_node, what=f"struct or class '{name}'")
            raise self.fail("C2N1022", type_node, name=name)
        return with_const(t, const)

    def _std_constant_type(self, type_node: ts.Node) -> A.CType | None:
        """``std::bool_constant<B>``, ``std::true_type``, ``std::false_type``: a ``bool``;
        ``std::integral_constant<T, V>``: a ``T`` (tag types whose value is their argument)."""
        got = std_constant(self, type_node)
        return got[0] if got is not None else None

    def _refused_type(self, type_node: ts.Node) -> A.CType | None:
        """Texture/surface objects and tensor-core fragments: report their id, then carry on with
        an opaque type so that the uses are reported too."""
        if type_node.type not in ("type_identifier", "qualified_identifier", "template_type"):
            return None
        sync = self._sync_type(type_node)
        if sync is not None:  # cuda::pipeline, cuda::barrier, cuda::aligned_size_t...
            return sync
        text = _text(type_node).replace(" ", "")
        head = text.split("<")[0]
        parts = head.split("::")
        if parts[-1] == "fragment" and is_fragment_type(type_node):
            return self.fragment_of(type_node).array
        if parts[-1] in TEXTURE_TYPES:
            self.error("C2N1015", type_node, what=head)
            return N.OpaqueType(name=head)
        if len(parts) > 1 and parts[-2] in ("wmma", "nvcuda", "mma"):
            self.error("C2N1017", type_node, what=head)
            return N.OpaqueType(name=head)
        if parts[-1] == "multi_grid_group":
            self.error("C2N1016", type_node, what=head)
            return N.OpaqueType(name=head)
        return None

    def _packed_template(self, node: ts.Node) -> A.CType:
        """``Packed128<float>``: an instance of a packed vector struct, else C2N1025."""
        ps = self.u.packed.get(_text(node.child_by_field_id(F.name)))
        args = node.child_by_field_id(F.arguments)
        kids = [c for c in args.named_children if c.kind_id not in COMMENT_IDS] if args else []
        if ps is None or ps.tparam is None or len(kids) != 1:
            raise self.fail("C2N1025", node, what=_text(node))
        elem = self._template_arg(kids[0])
        if not isinstance(elem, A.ScalarType):
            raise self.fail("C2N1025", node, what=_text(node))
        return self._packed_instance(ps, unqualified(elem), node)

    def _packed_instance(
        self, ps: PackedStruct, elem: A.ScalarType | None, node: ts.Node
    ) -> A.CType:
        """The vector type of ``ps`` over ``elem`` (None: a struct that is not a template)."""
        env: dict[str, int | A.CType | None] = {} if elem is None else {ps.tparam: elem}
        sub = BodyLowerer(self.u, self.func_name, env=env)
        statics: list[tuple[str, int, A.CType]] = []
        try:
            for name, tnode, vnode in ps.statics:
                value = sub.const_int_node(vnode)
                if value is None:
                    raise _Placeholder()
                statics.append((name, value, unqualified(sub.type_of(tnode))))
                sub.env[name] = value  # later members and the array size may use it
            base = unqualified(sub.type_of(ps.elem))
            width = sub.const_int_node(ps.dim)
        except _Placeholder:
            width = None
        if width is None or width < 1 or not isinstance(base, A.ScalarType):
            raise self.fail("C2N1025", node, what=f"struct '{ps.name}' (its array size)")
        vt = N.VectorType(name=f"{ps.name}<{base.name}>", base=base, width=width)
        self.u.packed_instances[vt.name] = PackedInstance(ps, width, tuple(statics))
        return vt

    def packed_of(self, t: A.CType | None) -> PackedInstance | None:
        """The packed vector struct instance ``t`` is (through pointers: no), else None."""
        return self.u.packed_instances.get(t.name) if isinstance(t, A.VectorType) else None

    def _named(self, name: str, node: ts.Node) -> A.CType | None:
        rec = self.u.records.get(name)
        if rec is not None and name not in self.env:
            return rec
        if name in self.u.aggregates and name not in self.env:
            agg = self.aggregate_type(name, node)
            return self.held_type(agg, node) if agg is not None else None  # type: ignore[return-value]
        ps = self.u.packed.get(name)
        if ps is not None and ps.tparam is None and self.lookup(name) is None:
            return self._packed_instance(ps, None, node)
        if name in self.env:
            v = self.env[name]
            if v is None:
                return N.OpaqueType(name=name)
            if isinstance(v, (int, A.FunctionRef)):
                raise self.fail("C2N1022", node, name=name)
            return v
        t = named_type(name)
        if t is None:
            t = self.u.typedefs.get(name) or DEVICE_RUNTIME_TYPES.get(name)
        return t

    @staticmethod
    def _sized(words: list[str]) -> A.CType | None:
        words = [w for w in words if w]
        base = [w for w in words if w not in ("unsigned", "signed", "long", "short")]
        unsigned = "unsigned" in words
        longs = words.count("long")
        short = "short" in words
        b = base[0] if base else "int"
        if b in ("float", "double"):
            return DOUBLE if b == "double" else FLOAT
        if b == "char":
            return S["uint8"] if unsigned else S["int8"]
        if short:
            return S["uint16"] if unsigned else S["int16"]
        if longs:
            return ULONG if unsigned else LONG
        return UINT if unsigned else INT

    def type_descriptor(self, node: ts.Node) -> A.CType:
        quals = tuple([c for c in node.children if c.kind_id in QUALIFIER_IDS])
        t = self.type_of(node.child_by_field_id(F.type), quals)
        decl = node.child_by_field_id(F.declarator)
        while decl is not None:
            if decl.type == "abstract_pointer_declarator":
                pq = [_text(c) for c in decl.children if c.kind_id in QUALIFIER_IDS]
                t = N.PointerType(pointee=t, const="const" in pq, restrict="__restrict__" in pq)
                decl = decl.child_by_field_id(F.declarator)
            elif decl.type == "abstract_array_declarator":
                size = decl.child_by_field_id(F.size)
                dim = None if size is None else self.const_int_node(size)
                t = N.ArrayType(elem=t, dims=(dim,))
                decl = decl.child_by_field_id(F.declarator)
            elif decl.type == "abstract_reference_declarator":
                decl = next((c for c in decl.named_children), None)
            else:
                raise self.fail("C2N1025", decl, what=_text(node))
        return t

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

    # ------------------------------------------------------------------ statements

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
        h = _STMT_BY_ID[node.kind_id]
        if self.pending_unroll is not None and node.type not in _UNROLL_TARGETS:
            self.pending_unroll = None  # `#pragma unroll` applies to the loop right after it
        try:
            if h is not None:
                return h(self, node)
            self._refuse(node)
        except _Placeholder:
            pass
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
        e = _EXPR_BY_ID[kind](self, e_node)
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

    # ------------------------------------------------------------------ declarations

    def s_declaration(self, node: ts.Node) -> list[A.Stmt]:
        quals = []
        storage = "local"
        constexpr = False
        extern = False
        for c in node.children:
            kind = c.kind_id
            if kind in QUALIFIER_IDS:
                word = self.text(c)
                if word == "__shared__":
                    storage = "shared"
                elif word == "constexpr":
                    constexpr = True
                    quals.append(c)
                elif word == "const":
                    quals.append(c)
                elif word == "__constant__":
                    raise self.fail("C2N1010", c, what="__constant__ variable inside a function")
            elif kind in STORAGE_CLASS_IDS:
                word = self.text(c)
                if word == "extern":
                    extern = True
                elif word == "static" and storage == "local":
                    storage = "static"
        type_node = node.child_by_field_id(F.type)
        if type_node is not None and type_node.kind_id not in _PRIMITIVE_IDS:
            cub = self.cub_storage_decl(node)  # CUB's TempStorage: no statement
            if cub is not None:
                return cub
        if (
            type_node is not None
            and type_node.kind_id not in _PRIMITIVE_IDS  # `float x` is no group object
            and self._is_cg_type(type_node)
        ):
            return self._cg_decl(node)
        if (
            type_node is not None
            and type_node.type == "template_type"
            and _text(type_node.child_by_field_id(F.name)) in self.u.smem_views
        ):
            return self._smem_view_decl(node, type_node)
        base = self.type_of(type_node, tuple(quals))
        decls = node.children_by_field_id(F.declarator)
        if len(decls) == 1:  # the common case: its statements are the declaration's
            out = self._declarator(decls[0], base, storage, extern, constexpr)
        else:
            out = []
            for c in decls:
                out.extend(self._declarator(c, base, storage, extern, constexpr))
        if type(base) is A.ArrayType and is_fragment_type(type_node):
            self.note_fragments(type_node, out)
        return out

    def _declarator(
        self, decl: ts.Node, base: A.CType, storage: str, extern: bool, constexpr: bool
    ) -> list[A.Stmt]:
        value = None
        outer = decl
        if decl.kind_id in _INIT_DECLARATOR_IDS:
            value = decl.child_by_field_id(F.value)
            decl = decl.child_by_field_id(F.declarator)
        # auto g = cg::this_thread_block();
        if value is not None and (
            (value.kind_id in _CALL_IDS and self._auto_cg(value))
            or (value.kind_id in _IDENTIFIER_IDS and self._is_group_arg(value))
        ):  # `auto g = cg::tiled_partition<32>(block);`, `auto g = tile;`
            kind, n = self._cg_value(value)
            if kind == MASKED:  # `auto g = cg::coalesced_threads();`: its lane mask
                return declare_masked(self, _text(decl), value)
            self.declare(_text(decl), Sym(None, cg=kind, tile=n))
            return []
        if decl.kind_id in _REFERENCE_DECLARATOR_IDS:
            return self._reference_decl(decl, base, value)
        if value is not None and value.type == "lambda_expression" and not self.host:
            return self.lambda_decl(decl, _text(decl), value)
        if not self.host and self.whole_lambda_call(value):  # `float y = f(x);`
            pre = self.lambda_value(decl, value)  # type: ignore[arg-type]
            return pre + self._declarator(outer, base, storage, extern, constexpr)
        name, ty = self._declarator_type(decl, base)
        if isinstance(ty, AggregateType):
            if storage != "local" or extern:
                raise self.fail("C2N1025", decl, what=f"{storage} struct '{ty.name}'")
            return self.agg_decl(decl, name, ty, value)
        if isinstance(base, AggregateType):  # pointers to and arrays of structs: their bytes
            ty = self.memory_type(ty, decl)
        if storage == "local" and not extern and self.blob_struct(ty) is not None:
            return self.bytes_local(decl, name, ty, value)  # a union, a struct with bit-fields
        store = storage  # local, static or shared, or extern_shared for `extern __shared__`
        if storage == "shared" and extern:
            store = "extern_shared"
        if extern and storage != "shared":
            raise self.fail("C2N1010", decl, what="extern declaration inside a function")
        if (
            isinstance(ty, A.ArrayType)
            and any(d is None for d in ty.dims)
            and store != "extern_shared"
            and not self.generic
        ):
            if value is None or value.type != "initializer_list":
                raise self.fail("C2N1026", decl, name=name)
            n = len([c for c in value.named_children if c.kind_id not in COMMENT_IDS])
            ty = N.ArrayType(elem=ty.elem, dims=(n, *ty.dims[1:]))
        init = None
        if value is not None:
            try:
                k = value.kind_id  # `= expr` (the common case) without _initializer's call
                if k in _BRACE_OR_ARGS_IDS:
                    init = self._initializer(value, ty)
                else:
                    init = _EXPR_BY_ID[k](self, value)
            except _Placeholder:
                self.declare(name, Sym(ty))  # keep the name known: no cascade of C2N1020
                raise
            if isinstance(ty, A.OpaqueType) and ty.name == "auto":
                ty = with_const(init.ty, ty.const) if init.ty is not None else ty
                if ty is None or isinstance(ty, A.OpaqueType) and ty.name == "auto":
                    raise self.fail("C2N1022", decl, name="auto")
        elif isinstance(ty, A.OpaqueType) and ty.name == "auto":
            raise self.fail("C2N1022", decl, name="auto")
        const_val = None
        if init is not None and getattr(ty, "const", False) and isinstance(ty, A.ScalarType):
            v = self.const_value(init)
            if v is not None:
                const_val = _convert(v, ty)
        self.declare(name, Sym(ty, const_val))
        return [
            N.VarDecl(
                loc=(decl.byte_range, self.placer),
                name=name,
                ty=ty,
                init=init,
                storage=store,
                constexpr=constexpr,
            )
        ]

    def _reference_decl(self, decl: ts.Node, base: A.CType, value: ts.Node | None) -> list[A.Stmt]:
        """``T& r = lvalue;`` becomes ``T* r = &lvalue;`` with every use of ``r`` read as
        ``*r``; a ``const T&`` bound to a temporary is a plain copy."""
        inner = [c for c in decl.named_children if c.kind_id not in COMMENT_IDS]
        if not inner or value is None:
            raise self.fail("C2N1025", decl, what="reference without an initializer")
        name, ty = self._declarator_type(inner[0], base)
        init = self.expr(value)
        if isinstance(ty, A.OpaqueType) and ty.name == "auto":
            ty = with_const(unqualified(init.ty), ty.const) if init.ty is not None else None
            if ty is None:
                raise self.fail("C2N1022", decl, name="auto")
        loc = (decl.byte_range, self.placer)
        if not is_lvalue(init):
            if not getattr(ty, "const", False):
                raise self.fail("C2N1030", value, what="non-const reference to a temporary")
            self.declare(name, Sym(ty))
            return [N.VarDecl(loc=loc, name=name, ty=ty, init=init)]
        ptr = N.PointerType(pointee=ty)
        self.declare(name, Sym(ptr, ref=True))
        return [N.VarDecl(loc=loc, name=name, ty=ptr, init=address_of(init))]

    def _declarator_type(self, decl: ts.Node, base: A.CType) -> tuple[str, A.CType]:
        """Walk a (possibly nested) declarator: pointers, arrays, parentheses."""
        t = base
        dims: list[int | None] = []
        node = decl
        while True:
            if node.kind_id in _IDENTIFIER_IDS:
                break
            k = node.type
            if k == "pointer_declarator":
                pq = [self.text(c) for c in node.children if c.kind_id in QUALIFIER_IDS]
                t = N.PointerType(pointee=t, const="const" in pq, restrict="__restrict__" in pq)
                node = node.child_by_field_id(F.declarator)
            elif k == "array_declarator":
                size = node.child_by_field_id(F.size)
                if size is None:
                    dims.insert(0, None)
                else:
                    v = self.const_int_node(size)
                    if v is None and self.generic:
                        dims.insert(0, None)  # depends on a template parameter
                        node = node.child_by_field_id(F.declarator)
                        continue
                    if v is None:
                        inner = node
                        while inner.type != "identifier" and inner.child_by_field_id(F.declarator):
                            inner = inner.child_by_field_id(F.declarator)
                        raise self.fail("C2N1026", size, name=_text(inner))
                    dims.insert(0, v)
                node = node.child_by_field_id(F.declarator)
            elif k in ("parenthesized_declarator", "attributed_declarator"):
                inner = [c for c in node.named_children if c.type not in ("attribute_declaration",)]
                if not inner:
                    raise self.fail("C2N1030", node, what=_text(node))
                node = inner[0]
            elif k == "reference_declarator":
                raise self.fail("C2N1025", node, what="reference variable")
            elif k == "function_declarator":
                raise self.fail("C2N1010", node, what="function declaration inside a function")
            else:
                raise self.fail("C2N1010", node, what=k.replace("_", " "))
            if node is None:
                raise self.fail("C2N1030", decl, what=_text(decl))
        if dims and type(t) is A.ArrayType:  # an array of arrays (a wmma fragment): one array
            t = N.ArrayType(elem=t.elem, dims=(*dims, *t.dims))
        elif dims:
            t = N.ArrayType(elem=t, dims=tuple(dims))
        return self.src[node.start_byte : node.end_byte].decode(), t

    def _initializer(self, value: ts.Node, ty: A.CType) -> A.Expr:
        k = value.kind_id
        if k not in _BRACE_OR_ARGS_IDS:  # `= expr`: the common case
            return _EXPR_BY_ID[k](self, value)
        if k in _INITIALIZER_LIST_IDS:
            return self._init_list(value, ty)
        if k in _ARGUMENT_LIST_IDS:  # T x(args): direct initialisation
            args = [self.expr(c) for c in value.named_children if c.kind_id not in COMMENT_IDS]
            if len(args) == 1:
                return args[0]
            if isinstance(ty, A.VectorType):
                return _vector_ctor(ty, tuple(args), self.loc(value))
            raise self.fail("C2N1030", value, what="constructor call with several arguments")
        return self.expr(value)

    def _init_list(self, node: ts.Node, ty: A.CType | None) -> A.Expr:
        items: list[A.Expr] = []
        elem = ty.elem if isinstance(ty, A.ArrayType) else None
        if isinstance(ty, A.ArrayType) and len(ty.dims) > 1:
            elem = N.ArrayType(elem=ty.elem, dims=ty.dims[1:])
        for c in node.named_children:
            if c.kind_id in COMMENT_IDS:
                continue
            if c.type == "initializer_list":
                items.append(self._init_list(c, elem))
            elif c.type == "initializer_pair":
                raise self.fail("C2N1010", c, what="designated initializer")
            else:
                items.append(self.expr(c))
        if isinstance(ty, A.VectorType):  # aggregate init: missing lanes are zero
            if len(items) > ty.width:
                raise self.fail("C2N1030", node, what=f"{len(items)} values for a {ty.name}")
            loc = (node.byte_range, self.placer)
            items += [N.IntLit(loc=loc, value=0, ty=INT)] * (ty.width - len(items))
            return _vector_ctor(ty, tuple(items), loc)
        if isinstance(ty, A.ScalarType) and len(items) <= 1:
            if not items:
                return N.IntLit(loc=(node.byte_range, self.placer), value=0, ty=INT)
            return items[0]
        return N.InitList(loc=(node.byte_range, self.placer), items=tuple(items), ty=ty)

    # ------------------------------------------------------------------ expressions

    def expr(self, node: ts.Node) -> A.Expr:
        # the hottest callers index _EXPR_BY_ID themselves (one call less per expression)
        return _EXPR_BY_ID[node.kind_id](self, node)

    def e_paren(self, node: ts.Node) -> A.Expr:
        inner = node.named_children
        if len(inner) == 1 and inner[0].type != "comment":
            e = inner[0]
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
            raise self.fail(
                "C2N1010",
                node,
                what=f"file-scope __shared__ variable '{name}' (declare it in the kernel)",
            )
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
        text = _text(node).replace(" ", "")
        parts = text.split("::")
        if parts[0] in ("", "std") and len(parts) == 2:
            fake = node.child_by_field_id(F.name)
            if fake is not None and fake.type == "identifier":
                return self.e_identifier(fake)
        k = _numeric_limit(text)
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
        packed = self._packed_static(node)
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
        when ``lo`` is a variable: ask the caller to re-parse with those parentheses blanked."""
        t = node.child_by_field_id(F.type)
        if self.host or t is None or t.type != "type_descriptor":
            return
        if t.child_by_field_id(F.declarator) is not None or len(t.named_children) != 1:
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
        self._check_misparsed_less(node)
        if self.host:
            return N.Name(loc=(node.byte_range, self.placer), name=_text(node), ty=None)
        raise self.fail("C2N1010", node, what=f"template name '{_text(node)}' used as a value")

    def e_string(self, node: ts.Node) -> A.Expr:
        if self.host:
            return N.Name(loc=(node.byte_range, self.placer), name=_text(node), ty=None)
        if self.in_assert:  # assert(cond && "message"): a string is a non-null pointer
            return N.BoolLit(loc=(node.byte_range, self.placer), value=True, ty=BOOL)
        raise self.fail("C2N1010", node, what="string literal")

    # ------------------------------------------------------------------ calls

    def _qualified_call_name(self, fn: ts.Node) -> tuple[str, list[ts.Node]]:
        """``cg::tiled_partition<32>`` -> ("cg::tiled_partition", [32 node])."""
        targs: list[ts.Node] = []
        parts: list[str] = []
        n = fn
        while n is not None:
            if n.type == "qualified_identifier":
                scope = n.child_by_field_id(F.scope)
                parts.append(_text(scope).replace(" ", "") if scope is not None else "")
                n = n.child_by_field_id(F.name)
            elif n.type == "template_function":
                parts.append(_text(n.child_by_field_id(F.name)))
                al = n.child_by_field_id(F.arguments)
                targs = [c for c in al.named_children if c.kind_id not in COMMENT_IDS] if al else []
                break
            else:  # _text(n), from the bytes this lowerer reads
                text = self.src[n.start_byte : n.end_byte].decode()
                parts.append(text.replace(" ", ""))
                break
        return "::".join(parts), targs

    def _callee_name(self, call: ts.Node) -> str:
        fn = call.child_by_field_id(F.function)
        if fn is None:
            return ""
        return self._qualified_call_name(fn)[0].split("::")[-1]

    def e_call(self, node: ts.Node) -> A.Expr:
        kids = node.children
        if len(kids) == 2:  # function, arguments (no launch configuration, no comment)
            fn, args_node = kids
        else:
            for c in kids:
                if c.type == "kernel_call_syntax":
                    if self.host:
                        return N.Name(loc=(node.byte_range, self.placer), name="<launch>", ty=None)
                    return device_launch(self, node, c, node.child_by_field_id(F.function))
            fn = node.child_by_field_id(F.function)
            args_node = node.child_by_field_id(F.arguments)
        arg_nodes = (
            [c for c in args_node.named_children if c.kind_id not in COMMENT_IDS]
            if args_node
            else []
        )
        loc = self.loc(node)
        ft = fn.type
        if ft == "field_expression":
            return self._method_call(node, fn, arg_nodes)
        if ft in ("primitive_type", "sized_type_specifier", "type_identifier"):
            return self._functional_cast(node, fn, arg_nodes)
        if ft == "identifier" and self.generic and self._function_tparam(_text(fn)):
            return self._opaque_function_call(node, fn, arg_nodes)  # `op(x)`, `op` not known yet
        if ft == "identifier" and (self.env or self.u.typedefs) and self._names_a_type(_text(fn)):
            return self._functional_cast(node, fn, arg_nodes)  # T(0) with T a typename / typedef
        if ft == "parenthesized_expression":  # `(T)(x)` reads as a call of `(T)`
            cast = self._paren_type_cast(node, fn, arg_nodes)
            if cast is not None:
                return cast
        if ft == "template_function":
            view = self._smem_view_call(node, fn, arg_nodes)
            if view is not None:
                return view
            self._check_misparsed_less(fn)
        elif ft not in ("identifier", "qualified_identifier"):
            if fn.type in REJECTED_KINDS or fn.is_error:
                self._refuse(fn)
            raise self.fail("C2N1010", fn, what="call through a function pointer or expression")
        if ft == "qualified_identifier" and self.u.packed and not self.host:
            fill = self._packed_fill_call(node, fn, arg_nodes)
            if fill is not None:
                return fill
        if ft == "identifier" and not self.host and self.is_lambda_call(node):
            got = self.lambda_result(node)
            if got is not None:  # computed by the statement (see .lambdas)
                return got
            raise self.fail("C2N1010", node, what="lambda call used as a value")
        if ft == "identifier" and self.u.methods and not self.host:
            got = self._identifier_method_call(node, fn, arg_nodes)
            if got is not None:
                return got
        if ft == "identifier" and self.generic and not self.host:
            got = self._opaque_object_call(node, fn, None, arg_nodes)
            if got is not None:  # `payoff(S)` with `Payoff payoff` a template parameter
                return got
        name, targ_nodes = self._qualified_call_name(fn)
        ref = self.env.get(name)
        if isinstance(ref, A.FunctionRef):  # a call of a function template parameter
            name = ref.name
        parts = name.split("::")
        short = parts[-1]
        ns = parts[-2] if len(parts) > 1 else ""
        if ns or short in _SPECIAL_CALLS or "numeric_limits" in name:
            special = self._special_call(node, name, short, ns, targ_nodes, arg_nodes, loc)
            if special is not None:
                return special
        if short in I.CACHE_STORES and len(arg_nodes) == 2 and not ns and not self.host:
            vec = self._word_of(arg_nodes[1])
            if vec is not None:  # `__stcs(reinterpret_cast<int4*>(p), v.get_bits())`
                ptr = self.expr(arg_nodes[0])
                if not isinstance(ptr.ty, A.PointerType):
                    raise self.fail("C2N1030", node, what=f"'{short}' through a non-pointer")
                deref = N.Unary(loc=loc, op="*", operand=ptr, ty=ptr.ty.pointee)
                return self._packed_store(node, deref, vec)
        self.in_assert = short == "assert"
        outs, self.agg_out = self.agg_out, None  # for this call, not for those in its arguments
        old_ok, self.agg_ok = self.agg_ok, not self.host
        try:
            args = [self.expr(a) for a in arg_nodes]
        finally:
            self.in_assert = False
            self.agg_ok = old_ok
        targs: list[A.Expr | A.CType] = [self._template_arg(t) for t in targ_nodes]
        fi = self._callee(parts)
        if fi is None and not ns and short == "init" and self.is_barrier_init(args):
            return N.IntLit(loc=loc, value=0, ty=INT)  # the barrier counts the whole block
        if fi is None and not ns and not self.host and short in COMPLEX_HELPERS:
            try:
                return complex_call(short, args, loc)
            except ComplexCallError as exc:
                raise self.fail("C2N1010", node, what=str(exc)) from None
        if fi is None and ns not in ("", "std", "cuda::std", "cuda"):
            if self.host:
                return N.Call(loc=loc, func=name, args=tuple(args), template_args=tuple(targs))
            raise self.fail("C2N1021", node, name=name)
        if fi is not None and not self.host and not self._intrinsic_overload(short, args):
            return self._user_call(node, short, fi, args, targs, arg_nodes, outs)
        for a, an in zip(args, arg_nodes):
            if type(a.ty) is AggregateType:
                self.agg_refused_use(an, a.ty)
        if short in I.RULES:
            hinted = None if self.host else _cache_hinted(short, args, loc)
            if hinted is not None:
                return hinted
            lo, hi = I.ARITY[short]
            if not (lo <= len(args) <= hi) and not self.host:
                exp = str(lo) if lo == hi else f"{lo} to {hi}"
                raise self.fail("C2N1028", node, name=short, got=len(args), expected=exp)
            ty = I.result_type(short, [a.ty for a in args])
            return N.Call(loc=loc, func=short, args=tuple(args), template_args=tuple(targs), ty=ty)
        if self.host:
            return N.Call(loc=loc, func=name, args=tuple(args), template_args=tuple(targs))
        raise self.fail("C2N1021", node, name=name)

    def _sync_method_call(
        self, node: ts.Node, obj: ts.Node, method: str, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """``bar.arrive_and_wait()``, ``pipe.consumer_wait()``, ``p->arrive_and_wait()``..."""
        if obj.type == "identifier":
            s = self.lookup(_text(obj))
            if s is None or s.cg:
                return None
            value = self.expr(obj)
        elif obj.type in ("parenthesized_expression", "pointer_expression", "subscript_expression"):
            value = self.expr(obj)
        else:
            return None
        return self.sync_method(node, value, method, arg_nodes)

    def _intrinsic_overload(self, short: str, args: list[A.Expr]) -> bool:
        """A header's overloads of an intrinsic (helper_math.h's ``make_float3(float4)``) next
        to a call of the intrinsic itself (``make_float3(x, y, z)``): no user overload takes
        that many arguments, the intrinsic does."""
        if short not in I.RULES:
            return False
        lo, hi = I.ARITY[short]
        if not lo <= len(args) <= hi:
            return False
        defs = self.u.overloads.get(short) or []
        same = [fd for fd in defs if len(_user_param_nodes(fd.node)) == len(args)]
        if not same:
            return True
        # `floorf(v.x)` inside helper_math.h's `floorf(float2 v)`: scalar arguments, and every
        # user overload of that arity takes a vector somewhere
        if not all(isinstance(a.ty, A.ScalarType) for a in args):
            return False
        for fd in same:
            if fd.is_template:
                return False
            _, types = self.u.full_signature(fd, {})
            if all(isinstance(unqualified(t), A.ScalarType) for t in types):
                return False
        return True

    def _smem_view_call(
        self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """``SharedMemory<T>()``: the dynamic shared memory as a ``T`` array (a view struct,
        see :mod:`cuda2nki.frontend.smemview`), else None."""
        name, targs = fn.child_by_field_id(F.name), fn.child_by_field_id(F.arguments)
        if self.host or name is None or _text(name) not in self.u.smem_views:
            return None
        kids = [c for c in targs.named_children if c.kind_id not in COMMENT_IDS] if targs else []
        if len(kids) != 1 or arg_nodes:
            raise self.fail("C2N1030", node, what=f"'{_text(fn)}' with arguments")
        elem = self._template_arg(kids[0])
        if isinstance(elem, A.Expr):
            raise self.fail("C2N1030", node, what=f"'{_text(fn)}' of a value")
        return self.smem_view(node, elem)

    def _smem_view_decl(self, node: ts.Node, type_node: ts.Node) -> list[A.Stmt]:
        """``SharedMemory<T> smem;``: ``smem`` is a ``T*`` to the dynamic shared memory."""
        args = type_node.child_by_field_id(F.arguments)
        kids = [c for c in args.named_children if c.kind_id not in COMMENT_IDS] if args else []
        elem = self._template_arg(kids[0]) if len(kids) == 1 else None
        if elem is None or isinstance(elem, A.Expr):
            raise self.fail("C2N1025", type_node, what=_text(type_node))
        out: list[A.Stmt] = []
        for d in node.children_by_field_id(F.declarator):
            if d.type != "identifier":
                raise self.fail("C2N1030", d, what=f"'{_text(d)}' of {_text(type_node)}")
            name = _text(d)
            view = self.smem_view(node, elem)
            ty = N.PointerType(pointee=unqualified(elem))
            self.declare(name, Sym(ty))
            self.view_vars.add(name)
            out.append(N.VarDecl(loc=self.loc(d), name=name, ty=ty, init=view))
        return out

    def smem_view(self, node: ts.Node, elem: A.CType) -> A.Expr:
        """The launch's dynamic shared memory as an array of ``elem``: an ``extern __shared__``
        array declared at the top of the function (one per element type)."""
        elem = unqualified(elem)
        key = re.sub(r"\W+", "_", _tyname(elem)).strip("_")
        decl = self.smem_arrays.get(key)
        if decl is None:
            ty = N.ArrayType(elem=elem, dims=(None,))
            decl = N.VarDecl(
                loc=self.loc(node), name=f"__c2n_smem_{key}", ty=ty, storage="extern_shared"
            )
            self.smem_arrays[key] = decl
        return N.Name(loc=(node.byte_range, self.placer), name=decl.name, ty=decl.ty)

    def _callee(self, parts: list[str]):
        """The user function ``a::b::f`` (or ``f``) calls: for a qualified name, one defined in
        that namespace; unqualified, one in the caller's namespace if there is one."""
        short = parts[-1]
        if len(parts) > 1:
            defs = self.u.in_namespace(short, "::".join(parts[:-1]))
            return defs[0] if defs else None
        fi = self.u.functions.get(short)
        if fi is None or len(self.u.overloads.get(short, ())) <= 1:
            return fi
        caller = self.u.functions.get(self.func_name.split("<")[0].split("(")[0])
        here = self.u.in_namespace(short, caller.namespace) if caller is not None else []
        return here[0] if here else fi

    def _special_call(
        self,
        node: ts.Node,
        name: str,
        short: str,
        ns: str,
        targ_nodes: list[ts.Node],
        arg_nodes: list[ts.Node],
        loc: SourceLoc,
    ) -> A.Expr | None:
        """Calls that are not plain function calls: C++ casts, cooperative groups, refused
        families (tensor cores, textures, async copies, device-side launches), numeric limits,
        printf.  None: an ordinary call.  (Only names in ``_SPECIAL_CALLS``, qualified names
        and numeric_limits can be one.)"""
        if short in ("static_cast", "reinterpret_cast", "const_cast", "dynamic_cast") and not ns:
            if len(targ_nodes) != 1 or len(arg_nodes) != 1:
                raise self.fail("C2N1030", node, what=short)
            to = (
                self.type_descriptor(targ_nodes[0])
                if targ_nodes[0].type == "type_descriptor"
                else self.type_of(targ_nodes[0])
            )
            operand = self.expr(arg_nodes[0])
            kind = {
                "static_cast": "static",
                "reinterpret_cast": "reinterpret",
                "const_cast": "const",
            }.get(short, "static")
            return N.Cast(loc=loc, to=to, operand=operand, kind=kind, ty=unqualified(to))
        if ns in CG_NAMESPACES or (short in ("this_thread_block", "tiled_partition") and not ns):
            return self._cg_call(node, short, arg_nodes)
        if ns in ("wmma", "nvcuda") or short in I.TENSOR_CORE_FUNCS:
            return self.wmma_call(node, short, arg_nodes)
        if short in I.TEXTURE_FUNCS:
            raise self.fail("C2N1015", node, what=short)
        if short in ASYNC_CALLS and ns in ("", "cuda") and not self.host:
            return self.async_call(node, short, arg_nodes)
        if short in ("move", "forward") and ns == "std" and len(arg_nodes) == 1:
            return self.expr(arg_nodes[0])  # a value category, not a computation
        if (
            short in ("memcpy", "__builtin_memcpy")
            and ns in ("", "std")
            and len(arg_nodes) == 3
            and not self.host
            and short not in self.u.functions
        ):  # a byte copy, as an asynchronous copy completed at once is
            got = struct_memcpy(self, node, arg_nodes)  # to or from a struct's members
            return got if got is not None else plain_memcpy(self, node, arg_nodes)
        if short == "aligned_size_t" and ns == "cuda" and len(arg_nodes) == 1:
            size = self.expr(arg_nodes[0])
            return N.Cast(loc=loc, to=ULONG, operand=size, kind="functional", ty=ULONG)
        if short in I.ASYNC_FUNCS or ns == "pipeline":
            raise self.fail("C2N1018", node, what=name)
        if short in DEVICE_RUNTIME_CALLS and not self.host and not ns:
            return runtime_call(self, node, short, arg_nodes)
        if short in I.DEVICE_RUNTIME_FUNCS and not self.host:
            code = "C2N1016" if "Cooperative" in short else "C2N1014"
            if code == "C2N1016":
                raise self.fail(code, node, what=short)
            raise self.fail(code, node, kernel=short)
        if ns == "numeric_limits" or "numeric_limits" in name:
            k = _numeric_limit(name)
            if k is not None:
                return k(loc)
        if short == "printf":
            self.note("C2N1019", node)
            return N.IntLit(loc=loc, value=0, ty=INT)
        return None

    def _template_arg(self, node: ts.Node) -> A.Expr | A.CType:
        fn = self._function_arg(node)
        if fn is not None:  # `blockReduce<warpReduceSum>`: a device function
            return N.Name(loc=(node.byte_range, self.placer), name=fn, ty=None)
        if node.type in ("type_descriptor", "type_identifier"):
            # `k<BS>`: the grammar cannot tell a constant's name from a type name
            simple = node if node.type == "type_identifier" else None
            if node.type == "type_descriptor" and node.child_by_field_id(F.declarator) is None:
                t = node.child_by_field_id(F.type)
                quals = [c for c in node.children if c.kind_id in QUALIFIER_IDS]
                if t is not None and t.type == "type_identifier" and not quals:
                    simple = t
            if simple is not None:
                name = _text(simple)
                if isinstance(self.env.get(name), int):  # an enclosing template's constant
                    return self.e_identifier(simple)
                if self._named(name, simple) is None and (
                    self.lookup(name) is not None or name in self.u.consts or self.host
                ):
                    return self.e_identifier(simple)
            if node.type == "type_descriptor":
                return self.type_descriptor(node)
        if node.type in ("primitive_type", "type_identifier", "sized_type_specifier"):
            return self.type_of(node)
        return self.expr(node)

    def _function_arg(self, node: ts.Node) -> str | None:
        """The device function a template argument names (``f``, ``&f``, a forwarded function
        parameter), else None."""
        if node.type == "pointer_expression" and _text(node.child_by_field_id(F.operator)) == "&":
            node = node.child_by_field_id(F.argument)
        elif node.type == "type_descriptor":
            if node.child_by_field_id(F.declarator) is not None:
                return None
            node = node.child_by_field_id(F.type)
        if node is not None and node.type == "qualified_identifier":  # `act::silu`
            parts = _text(node).replace(" ", "").split("::")
            defs = self.u.in_namespace(parts[-1], "::".join(parts[:-1]))
            defs = [d for d in defs if d.kind in ("device", "host_device")]
            return "::".join(parts) if defs else None
        if node is None or node.type not in ("identifier", "type_identifier"):
            return None
        name = _text(node)
        ref = self.env.get(name)
        if isinstance(ref, A.FunctionRef):
            return ref.name
        if name in self.env or self.lookup(name) is not None or name in self.u.typedefs:
            return None
        fd = self.u.functions.get(name)
        return name if fd is not None and fd.kind in ("device", "host_device") else None

    def _paren_type_cast(
        self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        inner = [c for c in fn.named_children if c.kind_id not in COMMENT_IDS]
        if len(inner) != 1 or inner[0].type != "identifier" or len(arg_nodes) != 1:
            return None
        name = _text(inner[0])
        if self.lookup(name) is not None:
            return None
        to = self._named(name, inner[0])
        if to is None:
            return None
        operand = self.expr(arg_nodes[0])
        return N.Cast(
            loc=(node.byte_range, self.placer), to=to, operand=operand, kind="c", ty=unqualified(to)
        )

    def _names_a_type(self, name: str) -> bool:
        """A ``typename`` template parameter or a typedef, not shadowed by a variable."""
        if self.lookup(name) is not None or name in self.u.functions:
            return False
        if name in self.env:
            return not isinstance(self.env[name], (int, A.FunctionRef))
        return name in self.u.typedefs

    def _functional_cast(self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr:
        if fn.type == "identifier":
            to = self._named(_text(fn), fn)
            if to is None:
                raise self.fail("C2N1022", fn, name=_text(fn))
        else:
            to = self.type_of(fn)
        if self.packed_of(to) is not None and len(arg_nodes) == 1:
            return self._packed_from_word(node, to, arg_nodes[0])
        args = [self.expr(a) for a in arg_nodes]
        loc = (node.byte_range, self.placer)
        if isinstance(to, A.VectorType):
            return _vector_ctor(to, tuple(args), loc)
        if len(args) != 1:
            raise self.fail("C2N1030", node, what=f"{_text(fn)}(...) with {len(args)} arguments")
        return N.Cast(loc=loc, to=to, operand=args[0], kind="functional", ty=unqualified(to))

    def _method_call(self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr:
        obj = fn.child_by_field_id(F.argument)
        method = _text(fn.child_by_field_id(F.field))
        if obj.type == "identifier":
            s = self.lookup(_text(obj))
            if s is not None and s.cg:
                args = [self.expr(a) for a in arg_nodes]
                return self._cg_method(s, method, args, node)
        if obj.type == "call_expression" and self._auto_cg(obj):
            k, n = self._cg_value(obj)
            args = [self.expr(a) for a in arg_nodes]
            return self._cg_method(Sym(None, cg=k, tile=n), method, args, node)
        if self.host:
            return N.Call(loc=(node.byte_range, self.placer), func=_text(fn), args=())
        got = self.cub_call(node, obj, method, arg_nodes)  # `BlockReduce(tmp).Sum(v)`
        if got is not None:
            return got
        if method in SYNC_METHODS:
            got = self._sync_method_call(node, obj, method, arg_nodes)
            if got is not None:
                return got
        if obj.type == "identifier" and _text(obj) in self.view_vars and not arg_nodes:
            views = self.u.smem_views.values()
            if any(method in v.methods for v in views):  # smem.getPointer()
                return self.expr(obj)
        if self.u.methods:  # a member function of an aggregate struct (see .methods)
            got = self._struct_method_call(node, fn, obj, method, arg_nodes)
            if got is not None:
                return got
        if self.generic and obj.type == "identifier":
            got = self._opaque_object_call(node, obj, method, arg_nodes)
            if got is not None:  # `payoff.is_in_the_money(S)`, `Payoff` a template parameter
                return got
        if self._word_of(node) is not None:
            raise self.fail(
                "C2N1010",
                node,
                what=f"the machine word '.{method}()' of a packed vector other than stored "
                "through a pointer",
            )
        raise self.fail("C2N1010", node, what=f"method call '.{method}()'")

    def _opaque_object_call(
        self, node: ts.Node, obj: ts.Node, method: str | None, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """Inside a template not instantiated yet: a call of (a member function of) an object
        whose type is a template parameter, an opaque value (its instances resolve it)."""
        s = self.lookup(_text(obj))
        ty = s.ty if s is not None else None
        if not isinstance(ty, A.OpaqueType) or self.env.get(ty.name, 0) is not None:
            return None
        args = [self.expr(a) for a in arg_nodes]
        func = _text(obj) if method is None else f"{_text(obj)}.{method}"
        out = N.OpaqueType(name=f"{ty.name}::{method or 'operator()'}")
        self.u.dependent_types.add(out.name)
        return N.Call(loc=(node.byte_range, self.placer), func=func, args=tuple(args), ty=out)

    def _function_tparam(self, name: str) -> bool:
        """``name`` is a function template parameter of this function, left uninstantiated."""
        if name not in self.env or self.env[name] is not None or self.lookup(name) is not None:
            return False
        fd = self.u.functions.get(self.func_name)
        params = fd.template_params if fd is not None else ()
        return any(p[0] == name and p[1] == "function" for p in params)

    def _opaque_function_call(self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr:
        """Inside a template not instantiated yet: a call of a function template parameter, of
        a result type its instances resolve."""
        args = [self.expr(a) for a in arg_nodes]
        out = N.OpaqueType(name=f"{_text(fn)}()")
        self.u.dependent_types.add(out.name)
        return N.Call(loc=(node.byte_range, self.placer), func=_text(fn), args=tuple(args), ty=out)

    def _identifier_method_call(
        self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """``f(x)`` with ``f`` a struct variable (its ``operator()``), or, inside a member
        function, another member function of the same struct."""
        name = _text(fn)
        s = self.lookup(name)
        if s is None and self.this_agg is not None and self.has_method(self.this_agg.name, name):
            leaves = self.own_leaves(node)
            return self.method_call(node, self.this_agg, leaves, name, arg_nodes, fn)
        if s is None:
            got = self.this_member(fn, name) if self.this_agg is not None else None
            if got is None:
                return None
            base: A.Expr = got  # a member that is itself a functor: not supported
            return None
        if type(s.ty) is not AggregateType and self.blob_struct(s.ty) is None:
            return None
        base = self.agg_value(fn)
        leaves = self.object_leaves(node, base, False)
        if leaves is None or not self.has_method(leaves[0].name, "operator()"):
            return None
        return self.method_call(node, leaves[0], leaves[1], "operator()", arg_nodes, fn)

    def _struct_method_call(
        self, node: ts.Node, fn: ts.Node, obj: ts.Node, method: str, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        arrow = _text(fn.child_by_field_id(F.operator)) == "->"
        if obj.type == "this" and arrow and self.this_agg is not None:
            if not self.has_method(self.this_agg.name, method):
                return None
            leaves = self.own_leaves(node)
            return self.method_call(node, self.this_agg, leaves, method, arg_nodes, obj)
        base = self.expr(obj) if arrow else self.agg_value(obj)
        got = self.object_leaves(node, base, arrow)
        if got is None:
            return None
        if not self.has_method(got[0].name, method):
            raise self.fail("C2N1021", fn, name=f"{got[0].name}::{method}")
        return self.method_call(node, got[0], got[1], method, arg_nodes, obj)

    # ------------------------------------------------------------------ packed words

    def e_compound_literal(self, node: ts.Node) -> A.Expr:
        """``Packed128<T>{word}``: a packed vector built from a machine word; ``Rec{a, b}``: a
        record struct; ``std::bool_constant<B>{}``: its constant (else refused)."""
        t_node, v_node = node.child_by_field_id(F.type), node.child_by_field_id(F.value)
        to = self.type_of(t_node) if t_node is not None else None
        items = (
            [c for c in v_node.named_children if c.kind_id not in COMMENT_IDS]
            if v_node is not None
            else []
        )
        if t_node is not None and t_node.type == "qualified_identifier":
            got = std_constant(self, t_node)
            if got is not None and got[1] is not None:  # std::bool_constant<true>{}
                return N.IntLit(loc=(node.byte_range, self.placer), value=got[1], ty=got[0])
            head = _text(t_node).replace(" ", "").split("<")[0].lstrip(":")
            if head == "cuda::aligned_size_t" and len(items) == 1:  # `aligned_size_t<16>{n}`
                size = self.expr(items[0])
                loc = (node.byte_range, self.placer)
                return N.Cast(loc=loc, to=ULONG, operand=size, kind="functional", ty=ULONG)
        if (
            type(to) is A.VectorType
            and to.name in self.u.record_fields
            and v_node is not None
            and v_node.kind_id in _INITIALIZER_LIST_IDS
        ):
            return self._init_list(v_node, to)  # Record{a, b}: aggregate initialisation
        if self.packed_of(to) is None or len(items) != 1:
            self._refuse(node)
        return self._packed_from_word(node, to, items[0])

    def _packed_from_word(self, node: ts.Node, to: A.CType, w_node: ts.Node) -> A.Expr:
        """``Packed128<T>{*reinterpret_cast<const int4*>(p)}`` (``__ldcs(...)``, ``q[i]``): the
        struct's word constructor copies the bits of a word loaded from memory, which is the
        load of the vector itself at that address."""
        inst = self.packed_of(to)
        assert inst is not None and isinstance(to, A.VectorType)
        if not inst.struct.word_ctor:
            raise self.fail("C2N1030", node, what=f"'{to.name}' has no word constructor")
        w = self.expr(w_node)
        got = self._retype_access(w, to)
        if got is None:
            raise self.fail(
                "C2N1010",
                node,
                what=f"a packed vector '{to.name}' built from a word that is not loaded "
                "from memory",
            )
        return got

    def _word_of(self, node: ts.Node) -> A.Expr | None:
        """``v.get_bits()`` with ``v`` a packed vector and ``get_bits`` its word getter: ``v``."""
        fn = node.child_by_field_id(F.function) if node.kind_id in _CALL_IDS else None
        args = node.child_by_field_id(F.arguments)
        if fn is None or fn.type != "field_expression" or args is None or args.named_children:
            return None
        obj, meth = fn.child_by_field_id(F.argument), fn.child_by_field_id(F.field)
        if obj is None or meth is None or _text(fn.child_by_field_id(F.operator)) != ".":
            return None
        s = self.lookup(_text(obj)) if obj.type == "identifier" else None
        if s is None or type(s.ty) is AggregateType:  # a struct's member function, not a word
            return None
        vec = self.expr(obj)
        inst = self.packed_of(vec.ty)
        if inst is None or _text(meth) not in inst.struct.getters:
            return None
        return vec

    def _packed_store(self, node: ts.Node, target: A.Expr, vec: A.Expr) -> A.Expr:
        """``*reinterpret_cast<int4*>(p) = v.get_bits()``: the store of ``v`` at ``p``."""
        to = unqualified(vec.ty)
        got = self._retype_access(target, to)
        if got is None:
            raise self.fail(
                "C2N1010",
                node,
                what="the machine word of a packed vector stored other than through a pointer",
            )
        return N.Assign(loc=(node.byte_range, self.placer), op="=", target=got, value=vec, ty=to)

    def _retype_access(self, e: A.Expr, to: A.VectorType) -> A.Expr | None:
        """``*q`` / ``q[i]`` with ``q`` a pointer to a word of ``to``'s size, as the same access
        through a pointer to ``to`` (a reinterpret cast of ``q`` is looked through)."""
        if isinstance(e, A.Unary) and e.op == "*":
            ptr, index = e.operand, None
        elif isinstance(e, A.Index):
            ptr, index = e.base, e.index
        else:
            return None
        word = ptr.ty.pointee if isinstance(ptr.ty, A.PointerType) else None
        if not isinstance(word, A.VectorType) or _bytes(word) != _bytes(to):
            return None
        inner = ptr
        if (
            isinstance(ptr, A.Cast)
            and ptr.kind in ("reinterpret", "c")
            and isinstance(ptr.operand.ty, A.PointerType)
        ):
            inner = ptr.operand
        const = word.const or (
            isinstance(inner.ty, A.PointerType) and getattr(inner.ty.pointee, "const", False)
        )
        pt = N.PointerType(pointee=with_const(to, const))
        cast = N.Cast(loc=ptr.loc, to=pt, operand=inner, kind="reinterpret", ty=pt)
        if index is None:
            return N.Unary(loc=e.loc, op="*", operand=cast, ty=pt.pointee)
        return N.Index(loc=e.loc, base=cast, index=index, ty=pt.pointee)

    def _with_defaults(
        self, name: str, fi: object, args: list[A.Expr], given: list[A.Expr], n_params: int
    ) -> list[A.Expr]:
        """``given`` completed with the callee's default arguments (``bool sync = true``),
        lowered where the call is; unchanged when a missing argument has no default."""
        fd = self.u.pick_overload(name, args, fi.namespace) or fi
        defaults = self.u.param_defaults(self, fd)
        if len(defaults) != n_params:
            return given
        missing = defaults[len(given) :]
        if any(d is None for d in missing):
            return given
        return [*given, *(self.expr(d) for d in missing)]

    def _user_call(
        self,
        node: ts.Node,
        name: str,
        fi: object,
        args: list[A.Expr],
        targs: list[A.Expr | A.CType],
        arg_nodes: list[ts.Node],
        outs: list[A.Expr] | None = None,
    ) -> A.Expr:
        # drop cooperative-groups arguments (groups are erased, see ast.py)
        groups = [self._cg_value(a) if self._is_group_arg(a) else None for a in arg_nodes]
        args2 = [a for a, g in zip(args, groups) if g is None] if any(groups) else args
        target, ret, n_params, refs = self.u.resolve_call(self, node, name, fi, args, targs, groups)
        by_value = [type(a.ty) is AggregateType or self.member_wise(a.ty) for a in args2]
        if any(by_value):  # a struct (a variable, or in memory): its members
            nodes = [n for n, g in zip(arg_nodes, groups) if g is None]
            args2 = [
                leaf
                for a, an, bv in zip(args2, nodes, by_value)
                for leaf in (self.agg_leaves(an, a) if bv else [a])
            ]
        if type(ret) is AggregateType:  # the struct comes back through member pointers
            if outs is None:
                raise self.fail(
                    "C2N1025",
                    node,
                    what=f"struct '{ret.name}' returned by '{name}' other than into a variable",
                )
            args2, ret = [*args2, *outs], VOID
        if n_params is not None and n_params > len(args2):
            args2 = self._with_defaults(name, fi, args, args2, n_params)
        if n_params is not None and n_params != len(args2):
            raise self.fail("C2N1028", node, name=name, got=len(args2), expected=n_params)
        if any(refs):  # a non-const reference parameter receives the argument's address
            args2 = list(args2)
            for i, is_ref in enumerate(refs[: len(args2)]):
                if is_ref:
                    if not is_lvalue(args2[i]):
                        raise self.fail(
                            "C2N1030",
                            node,
                            what=f"argument {i + 1} of '{name}' must "
                            "be a variable (the parameter is a reference)",
                        )
                    args2[i] = address_of(args2[i])
        self.calls.append((target, self.loc(node)))
        call = N.Call(
            loc=(node.byte_range, self.placer),
            func=name,
            args=tuple(args2),
            template_args=tuple(targs),
            target=target,
            ty=ret,
        )
        if fi is not None and self.u.returns_ref(fi) and isinstance(ret, A.PointerType):
            return N.Unary(loc=call.loc, op="*", operand=call, ty=ret.pointee)  # `T&`: an lvalue
        return call


# assignment targets that may be a whole struct (see .aggregates)
_STRUCT_TARGETS = frozenset(
    ("identifier", "field_expression", "subscript_expression", "pointer_expression")
)

# statements a pending `#pragma unroll` passes over (loops take it; comments and pragmas keep it)
_UNROLL_TARGETS = frozenset(
    ("for_statement", "while_statement", "do_statement", "comment", "preproc_call")
)


def _cache_hinted(name: str, args: list[A.Expr], loc: SourceLoc | PendingLoc) -> A.Expr | None:
    """A load or store with a cache hint through a pointer, as the plain access: ``__ldcs(p)``
    (``__ldg``, ``__ldca``, ...) is ``*p``, ``__stcs(p, v)`` (``__stcg``, ``__stwb``, ``__stwt``)
    is ``*p = v``; None for another call or another argument type."""
    ptr = args[0] if args else None
    if ptr is None or not isinstance(ptr.ty, A.PointerType):
        return None
    deref = N.Unary(loc=loc, op="*", operand=ptr, ty=ptr.ty.pointee)
    if name in I.CACHE_LOADS and len(args) == 1:
        return deref
    if name in I.CACHE_STORES and len(args) == 2:
        return N.Assign(
            loc=loc, op="=", target=deref, value=args[1], ty=unqualified(ptr.ty.pointee)
        )
    return None


def _bytes(t: A.VectorType) -> int:
    return t.base.bits // 8 * t.width


def _vector_ctor(ty: A.VectorType, args: tuple[A.Expr, ...], loc: SourceLoc | PendingLoc) -> A.Expr:
    """``make_float4(...)``-style constructor call for a vector type (any spelling)."""
    base = ty.base.name
    if ty.width == 2 and base == "float16":
        func = "make_half2"
    elif ty.width == 2 and base == "bfloat16":
        func = "make_bfloat162"
    else:
        func = f"make_{ty.name}"
    return N.Call(loc=loc, func=func, args=args, ty=unqualified(ty))


def _tyname(t: A.CType | None) -> str:
    from cuda2nki.frontend.typesys import type_str

    return type_str(t)


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


_SCALAR = A.ScalarType
_PRIMITIVE_IDS = PRIMITIVE_IDS
_COMPARISONS = frozenset(("<", "<=", ">", ">=", "==", "!=", "&&", "||"))
_ARITHMETIC = frozenset(("+", "-", "*", "/"))
# unqualified callee names BodyLowerer._special_call handles (every other unqualified name,
# without numeric_limits in it, is an ordinary call)
_SPECIAL_CALLS = frozenset(
    (
        "static_cast",
        "reinterpret_cast",
        "const_cast",
        "dynamic_cast",
        "this_thread_block",
        "tiled_partition",
        "printf",
        "memcpy",
        "__builtin_memcpy",
    )
) | (I.TENSOR_CORE_FUNCS | I.TEXTURE_FUNCS | I.ASYNC_FUNCS | I.DEVICE_RUNTIME_FUNCS | ASYNC_CALLS)
_SPECIAL_CALLS |= frozenset(DEVICE_RUNTIME_CALLS)
_INIT_DECLARATOR_IDS = kind_ids("init_declarator")
_IDENTIFIER_IDS = kind_ids("identifier")
_SUBSCRIPT_ARGUMENTS_IDS = kind_ids("subscript_argument_list")
_REFERENCE_DECLARATOR_IDS = kind_ids("reference_declarator")
_CALL_IDS = kind_ids("call_expression")
_BINARY_IDS = kind_ids("binary_expression")
_INITIALIZER_LIST_IDS = kind_ids("initializer_list")
_PAREN_IDS = kind_ids("parenthesized_expression")
_CAST_OR_BINARY = frozenset(("*", "-", "+", "&"))
#: right operands that bind looser than a unary operator (the cast cannot be read back)
_LOOSE_KINDS = frozenset(
    ("binary_expression", "conditional_expression", "assignment_expression", "comma_expression")
)
_ARGUMENT_LIST_IDS = kind_ids("argument_list")
_BRACE_OR_ARGS_IDS = _INITIALIZER_LIST_IDS | _ARGUMENT_LIST_IDS


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


def _user_param_nodes(fnode: ts.Node) -> list[ts.Node]:
    """The parameters of a function definition (``void`` alone is none)."""
    d = fnode.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_id(F.declarator)
    plist = d.child_by_field_id(F.parameters) if d is not None else None
    kids = [c for c in plist.named_children if c.kind_id not in COMMENT_IDS] if plist else []
    return [] if len(kids) == 1 and _text(kids[0]).strip() == "void" else kids


_STD_TAGS = {"true_type": 1, "false_type": 0}


def std_constant(low: BodyLowerer, node: ts.Node) -> tuple[A.CType, int | None] | None:
    """``std::bool_constant<E>`` / ``std::integral_constant<T, E>`` / ``std::true_type`` /
    ``std::false_type`` at ``node``: (the value's type, the value when it is a constant here),
    else None."""
    text = _text(node).replace(" ", "")
    if not text.startswith(("std::", "::std::")) and not text.startswith("cuda::std::"):
        return None
    leaf = node.child_by_field_id(F.name)
    while leaf is not None and leaf.type == "qualified_identifier":
        leaf = leaf.child_by_field_id(F.name)
    if leaf is None:
        return None
    if leaf.type == "type_identifier" and _text(leaf) in _STD_TAGS:
        return BOOL, _STD_TAGS[_text(leaf)]
    if leaf.type != "template_type":
        return None
    name = _text(leaf.child_by_field_id(F.name))
    args = leaf.child_by_field_id(F.arguments)
    kids = [c for c in args.named_children if c.kind_id not in COMMENT_IDS] if args else []
    if name == "bool_constant" and len(kids) == 1:
        ty, vnode = BOOL, kids[0]
    elif name == "integral_constant" and len(kids) == 2:
        ty = low._template_arg(kids[0])
        if not isinstance(ty, A.ScalarType):
            return None
        vnode = kids[1]
    else:
        return None
    value = low._template_arg(vnode)
    v = low.const_value(value) if isinstance(value, A.Expr) else None
    return ty, (int(v) if isinstance(v, int | bool) else None)
