"""Translation-unit level lowering: functions, templates, globals, launch sites, call graph.

Each function is judged by its own subtree: a syntax error elsewhere never rejects it.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import tree_sitter as ts

from cuda2nki.diagnostics import Diagnostic, Severity, SourceLoc, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import (
    AggregateDef,
    AggregateType,
    aggregate_def,
    decay_array_members,
    flatten,
    has_data_members,
    out_params,
)
from cuda2nki.frontend.arrayparams import written_extents
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.autoret import deduce_return, deduced, is_auto
from cuda2nki.frontend.constfold import convert
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    QUALIFIER_IDS,
    F,
    describe_error,
    first_error,
    kind_ids,
)
from cuda2nki.frontend.cubblock import CubType
from cuda2nki.frontend.fileconsts import file_scope_direct_init
from cuda2nki.frontend.fileshared import register_file_shared
from cuda2nki.frontend.groupgen import (
    bound_group,
    generic_instance_name,
    group_env,
    is_group_bound,
)
from cuda2nki.frontend.locs import Placer
from cuda2nki.frontend.lower import _PRIMITIVE_IDS, BodyLowerer
from cuda2nki.frontend.lower import _vector_ctor as vector_ctor
from cuda2nki.frontend.lowerbase import INTERNAL_ERRORS, GroupArg, Reparse, Sym, _Placeholder, _text
from cuda2nki.frontend.methods import this_params
from cuda2nki.frontend.packed import PackedInstance, PackedStruct, packed_struct
from cuda2nki.frontend.preprocess import LineMap
from cuda2nki.frontend.records import record_struct
from cuda2nki.frontend.refcopy import unchanged_reference
from cuda2nki.frontend.smemview import SmemView, smem_view_struct
from cuda2nki.frontend.staticmembers import StaticStruct, static_struct
from cuda2nki.frontend.structbytes import blob_init
from cuda2nki.frontend.structtemplates import StructTemplate, nested_enums, struct_template
from cuda2nki.frontend.tagdispatch import tag_constant
from cuda2nki.frontend.texture import LegacyTexture, register_legacy
from cuda2nki.frontend.traits import TraitStruct, trait_struct
from cuda2nki.frontend.typesys import (
    INT,
    VOID,
    float_literal,
    int_literal,
    named_type,
    type_str,
    unqualified,
)
from cuda2nki.frontend.unsized import sized_by_init
from cuda2nki.frontend.vartemplates import VarTemplate

_FUNC_QUALS = ("__global__", "__device__", "__host__")
_PARAMETER_IDS = kind_ids("parameter_declaration", "optional_parameter_declaration")
_REFERENCE_DECLARATOR_IDS = kind_ids("reference_declarator")
_BLANK_RE = re.compile(rb"[^\n]")


@dataclass
class FuncDef:
    """A function definition found in the CST (before lowering)."""

    node: ts.Node
    name: str
    kind: str  # global | device | host_device | host
    template_params: list[tuple[str, str, ts.Node | None, ts.Node]] = field(default_factory=list)
    template_ok: bool = True  # False: variadic / template-template parameters
    namespace: str = ""  # ``a::b`` for a function defined in ``namespace a { namespace b {``
    forceinline: bool = False
    order: int = 0
    this_struct: str = ""  # a member function of this aggregate struct (see .methods)

    @property
    def is_template(self) -> bool:
        return bool(self.template_params) or not self.template_ok


class UnitContext:
    """Everything shared by the functions of one file."""

    def __init__(self, filename: str, src: bytes, linemap: LineMap) -> None:
        self.filename = filename
        self.src = src
        self.linemap = linemap
        self.typedefs: dict[str, A.CType] = {}
        self.globals: dict[str, A.CType] = {}
        self.global_vars: list[A.GlobalVar] = []
        self.consts: dict[str, tuple[int | float, A.CType]] = {}
        self.functions: dict[str, FuncDef] = {}
        self.instances: dict[str, A.Function] = {}  # device-template instances by instance name
        self.in_progress: set[str] = set()
        self.graph: dict[str, list[tuple[str, SourceLoc]]] = {}
        self.rejected: dict[str, list[Diagnostic]] = {}
        self.diags: list[Diagnostic] = []
        self._sig_cache: dict[tuple, tuple[A.CType, int]] = {}
        self.auto_busy: set[tuple] = set()  # functions whose ``auto`` return is being deduced
        self.explicit: list[ts.Node] = []
        #: file-scope __shared__ variables by name (see .fileshared); None: type not read
        self.file_shared: dict[str, A.VarDecl | None] = {}
        self.file_shared_uses: dict[str, set[str]] = {}  # per function: the ones it names
        self.structs: set[str] = set()
        self.traits: dict[str, list[TraitStruct]] = {}  # structs with member typedefs
        self.dependent_types: set[str] = set()  # `S<T>::X` met before T is known
        self.struct_templates: dict[str, StructTemplate] = {}  # see .structtemplates
        self.var_templates: dict[str, VarTemplate] = {}  # see .vartemplates
        self.global_templates: dict[str, VarTemplate] = {}  # see .globaltemplates
        self.methods: dict[str, set[str]] = {}  # struct -> its member functions
        self.empty_structs: set[str] = set()  # structs without data members (a base adds none)
        self.static_structs: dict[str, StaticStruct] = {}  # see .staticmembers
        self.static_values: dict[tuple, dict] = {}  # their members' values per template args
        self.ref_returns: set[int] = set()  # member functions returning a reference (node ids)
        self.method_defs: list[FuncDef] = []  # lowered with the file's functions
        self.fn_types: set[str] = set()  # typedefs of function-pointer types
        self.cub_types: dict[str, CubType] = {}  # file-scope aliases of CUB collectives
        self.ns = ""  # while collecting: the namespace of the declaration at hand
        self.packed: dict[str, PackedStruct] = {}  # packed vector structs by name
        self.packed_instances: dict[str, PackedInstance] = {}  # by their VectorType's name
        self.records: dict[str, A.VectorType] = {}  # record structs by name (see .records)
        self.record_fields: dict[str, tuple[str, ...]] = {}  # by their VectorType's name
        self.aggregates: dict[str, AggregateDef] = {}  # see .aggregates, by every name
        #: per `<<<>>>` launch site, in order: its call node and the host evaluator that read it
        self.launch_calls: list[tuple[object, ts.Node]] = []
        self.aggregate_types: dict[str, AggregateType] = {}
        self.aggregates_busy: set[str] = set()
        self.blobs: dict[str, AggregateType] = {}  # structs in memory, by their bytes' name
        self.smem_views: dict[str, SmemView] = {}  # shared-memory view structs (see .smemview)
        self.overloads: dict[str, list[FuncDef]] = {}
        self.textures: dict[str, LegacyTexture] = {}  # file-scope texture references
        self._refs_cache: dict[tuple, tuple[bool, ...]] = {}  # explicit template instantiations
        self.op_override: dict[int, str] = {}  # byte offset -> operator (see Reparse)
        self._trees: list[ts.Tree] = []
        # locations are worked out when first read (most never are)
        self.placer = Placer(filename, src, linemap)
        self.loc: Callable[[ts.Node], SourceLoc] = self.placer.loc

    @property
    def unknown_loc(self) -> SourceLoc:
        """Where a problem with no syntax node of its own points: the file's first line."""
        return SourceLoc(self.filename, 1, 1)

    # ------------------------------------------------------------------ file-scope tables

    def register_typedef(self, node: ts.Node, lowerer: BodyLowerer | None = None) -> None:
        fn = _function_pointer_typedef(node)
        if fn is not None:  # `using f_t = float (*)(float);`, `typedef float (*f_t)(float);`
            self.fn_types.add(fn)
            return
        low = lowerer or BodyLowerer(self, "<file>", host=True)
        if self._typedef_record(node, low):
            return
        inner = node.child_by_field_id(F.type) if node.type == "type_definition" else None
        if inner is not None and inner.type == "enum_specifier":
            self.register_enum(inner)  # `typedef enum { A, B } mode_t;`: A and B are constants
        if lowerer is None and low.cub_typedef(node, file_scope=True):
            return
        try:
            if node.type == "alias_declaration":
                name = _text(node.child_by_field_id(F.name))
                self.typedefs[name] = low.type_descriptor(node.child_by_field_id(F.type))
                return
            quals = tuple([c for c in node.children if c.kind_id in QUALIFIER_IDS])
            base = low.type_of(node.child_by_field_id(F.type), quals)
            for i, c in enumerate(node.children):
                if node.field_name_for_child(i) == "declarator":
                    if c.type == "type_identifier":
                        self.typedefs[_text(c)] = base
                    elif c.type == "pointer_declarator":
                        inner = c.child_by_field_id(F.declarator)
                        if inner is not None and inner.type == "type_identifier":
                            self.typedefs[_text(inner)] = N.PointerType(pointee=base)
                    elif c.type == "array_declarator":  # `typedef float vec2[2];`
                        got = _array_typedef(low, c, base)
                        if got is not None:
                            self.typedefs[got[0]] = got[1]
        except _Placeholder:  # a typedef of something unsupported (a struct...)
            for i, c in enumerate(node.children):
                if node.field_name_for_child(i) == "declarator" and c.type == "type_identifier":
                    self.structs.add(_text(c))

    def _typedef_record(self, node: ts.Node, low: BodyLowerer) -> bool:
        """``typedef struct [tag] { float a, b; } Name[, *PName];``: a record struct under every
        name the typedef gives it (True when ``node`` is one)."""
        t_node = node.child_by_field_id(F.type) if node.type == "type_definition" else None
        if t_node is None or t_node.type not in (
            "struct_specifier",
            "class_specifier",
            "union_specifier",
        ):
            return False
        decls = [
            c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "declarator"
        ]
        plain = [_text(c) for c in decls if c.type == "type_identifier"]
        vt = self.register_struct(t_node, None, plain[0] if plain else None, low)
        ag = aggregate_def(t_node, plain[0]) if vt is None and plain else None
        if ag is not None:  # a struct of members of different types: under every plain name
            for name in plain:
                self.add_aggregate(name, ag)
            return len(plain) == len(decls)
        if vt is None:
            return False
        for c in decls:
            if c.type == "type_identifier":
                self.typedefs[_text(c)] = vt
            elif c.type == "pointer_declarator":
                inner = c.child_by_field_id(F.declarator)
                if inner is not None and inner.type == "type_identifier":
                    self.typedefs[_text(inner)] = N.PointerType(pointee=vt)
        return True

    def register_struct(
        self,
        node: ts.Node,
        tparams: ts.Node | None = None,
        alias: str | None = None,
        lowerer: BodyLowerer | None = None,
    ) -> A.VectorType | None:
        """Remember struct/class names: using one in device code is C2N1025, not C2N1022; a
        packed vector struct (see :mod:`cuda2nki.frontend.packed`) is a short vector type, and
        so is a record struct (see :mod:`cuda2nki.frontend.records`), which is returned."""
        name = node.child_by_field_id(F.name)
        trait = trait_struct(node, tparams)
        if trait is not None and trait not in self.traits.get(trait.name, ()):
            self.traits.setdefault(trait.name, []).append(trait)
        view = smem_view_struct(node)
        if view is not None:
            old = self.smem_views.get(view.name)
            methods = tuple(dict.fromkeys((*(old.methods if old else ()), *view.methods)))
            self.smem_views[view.name] = SmemView(view.name, methods)
        if name is not None:
            self.structs.add(_text(name).split("<")[0].strip())
            ps = packed_struct(node, tparams)
            if ps is not None:
                self.packed[ps.name] = ps
                return None
        ss = static_struct(node, tparams)  # `static constexpr int kThreads = 128;` members
        if ss is not None:
            self.static_structs[ss.name] = ss
        if name is not None:
            self._register_nested_enums(node, _text(name).split("<")[0].strip())
            if name.type == "type_identifier" and not has_data_members(node):
                self.empty_structs.add(_text(name))
        if tparams is not None:
            st = struct_template(node, tparams) if name is not None else None
            if st is not None and name.type == "type_identifier":
                self.struct_templates[st.agg.name] = st
            return None
        rs = record_struct(node, alias)
        if rs is None:
            ag = aggregate_def(node, alias)
            if ag is not None:
                self.add_aggregate(ag.name, ag)
            return None
        low = lowerer or BodyLowerer(self, "<file>", host=True)
        try:
            elem = low.type_of(rs.elem, rs.quals)
        except _Placeholder:
            return None
        if not isinstance(elem, A.ScalarType) or elem.name == "void":
            ag = aggregate_def(node, alias)  # `struct { uint4 x, y; }`: members, not lanes
            if ag is not None:
                self.add_aggregate(ag.name, ag)
            return None
        base = N.ScalarType(name=elem.name)
        vt = N.VectorType(
            name=rs.name, base=base, width=len(rs.fields), align=max(1, base.bits // 8)
        )
        self.records[rs.name] = vt
        self.record_fields[rs.name] = rs.fields
        return vt

    def ref_return_ok(self, fnode: ts.Node) -> bool:
        """Whether ``fnode`` may return a reference: a member function (``T& operator[]``) or
        a device function (``float& at(float* m, int r, int c)``), lowered as returning the
        address, its calls reading through it (an lvalue alias of what it returns)."""
        return fnode.id in self.ref_returns or function_kind(fnode)[0] in _DEVICE_KINDS

    def returns_ref(self, fd: FuncDef) -> bool:
        return self.ref_return_ok(fd.node) and _returns_reference(fd.node)

    def this_of(self, low: BodyLowerer, fd: FuncDef) -> list[tuple[str, A.CType]]:
        """The member pointers member function ``fd`` takes first; sets ``low.this_agg``."""
        agg = low.aggregate_type(fd.this_struct, fd.node)
        got = this_params(agg) if agg is not None else None
        if got is None:
            raise low.fail("C2N1025", fd.node, what=f"member function of struct '{fd.this_struct}'")
        low.this_agg = agg
        return got

    def add_aggregate(self, name: str, ag: AggregateDef) -> None:
        """An aggregate struct under ``name``; its member functions become device functions
        ``Struct::name`` (see :mod:`cuda2nki.frontend.methods`)."""
        if any(b not in self.empty_structs for b in ag.bases):
            return  # a base with data members lays them out first: not read here
        self.aggregates[name] = ag
        stack = list(ag.nested)  # anonymous members: `Outer::__anonN`
        while stack:
            inner = stack.pop()
            self.aggregates[inner.name] = inner
            stack.extend(inner.nested)
        if name != ag.name or ag.name in self.methods:
            return
        self.methods[ag.name] = set()
        for mname, fnode in ag.methods:
            kind, forceinline = function_kind(fnode)
            if kind in ("global", "host"):
                continue
            fname = f"{ag.name}::{mname}"
            fd = FuncDef(node=fnode, name=fname, kind=kind, forceinline=forceinline)
            fd.this_struct = ag.name
            self.ref_returns.add(fnode.id)
            fd.order = 1_000_000 + len(self.method_defs)
            self.methods[ag.name].add(mname)
            self.method_defs.append(fd)
            self.functions.setdefault(fname, fd)
            self.overloads.setdefault(fname, []).append(fd)

    def _register_nested_enums(self, node: ts.Node, struct: str) -> None:
        """The enums declared in struct ``struct``'s body: ``S::Put`` and ``S<T>::Put``."""
        outer = self.ns
        self.ns = f"{outer}::{struct}" if outer else struct
        try:
            for e in nested_enums(node):
                self.register_enum(e)
        finally:
            self.ns = outer

    def register_enum(self, node: ts.Node) -> None:
        """Enumerators are integer constants, named plainly and by every qualified spelling
        (``Mode::Relu``, ``cfg::ROWS``, ``cfg::Tile::ROWS``); a named enum is an ``int``."""
        low = BodyLowerer(self, "<file>", host=True)
        body = node.child_by_field_id(F.body)
        name = node.child_by_field_id(F.name)
        ename = _text(name) if name is not None else ""
        if ename:
            self.typedefs[ename] = INT
        scoped = any(c.type in ("class", "struct") for c in node.children)
        scopes = [self.ns] if not ename else [f"{self.ns}::{ename}".lstrip(":")]
        if ename and not scoped:  # an unscoped enum's names live in the enclosing scope too
            scopes.append(self.ns)
        nxt = 0
        for e in body.named_children if body is not None else ():
            if e.type != "enumerator":
                continue
            v = e.child_by_field_id(F.value)
            if v is not None:
                got = low.const_int_node(v)
                if got is None:
                    return
                nxt = got
            member = _text(e.child_by_field_id(F.name))
            self.consts[member] = (nxt, INT)
            for scope in scopes:
                self.add_qualified_const(scope, member, (nxt, INT))
            nxt += 1

    def add_qualified_const(self, scope: str, name: str, value: tuple) -> None:
        """``name`` declared in ``scope`` (``a::b``), reachable as ``b::name`` and
        ``a::b::name``."""
        parts = [p for p in scope.split("::") if p]
        for k in range(len(parts)):
            self.consts["::".join(parts[k:] + [name])] = value

    def register_global(self, node: ts.Node) -> None:
        """File-scope declaration: __constant__/__device__ variables, host constants."""
        words = set()
        for c in node.children:
            if c.type in ("type_qualifier", "storage_class_specifier"):
                words.add(_text(c))
            elif not c.is_named:
                words.add(c.type)
        decls = [c for c in node.children_by_field_id(F.declarator)]
        if any(_is_function_declarator(d) for d in decls):
            file_scope_direct_init(self, node, words)  # `constexpr int n(a * b);`
            return  # else a prototype
        type_node = node.child_by_field_id(F.type)
        if type_node is not None and type_node.type == "enum_specifier":
            self.register_enum(type_node)
        if type_node is not None and register_legacy(self, type_node, decls):
            return  # texture<T, dim> references: read by the kernels' fetches (.texture)
        if "__shared__" in words:  # per-block memory of the kernels using it (.fileshared)
            register_file_shared(self, node, words)
            return
        if "__constant__" in words:
            space = "constant"
        elif "__device__" in words or "__managed__" in words:
            space = "device"
        elif "const" in words or "constexpr" in words:
            space = "host_const"
        else:
            return  # a host variable: irrelevant to kernels
        low = BodyLowerer(self, "<file>", host=True)
        quals = tuple(
            c
            for c in node.children
            if c.kind_id in QUALIFIER_IDS and _text(c) in ("const", "constexpr")
        )
        try:
            base = low.type_of(type_node, quals)
        except _Placeholder:
            return
        for d in decls:
            try:
                value = d.child_by_field_id(F.value) if d.type == "init_declarator" else None
                dnode = d.child_by_field_id(F.declarator) if d.type == "init_declarator" else d
                name, ty = low._declarator_type(dnode, base)
                init = low._initializer(value, ty) if value is not None else None
            except _Placeholder:
                continue
            ty = sized_by_init(ty, init)
            if space == "host_const":
                v = tag_constant(low, type_node)  # `constexpr std::true_type on;`: its type's
                if v is None:
                    v = low.const_value(init) if init is not None else None
                if v is not None and isinstance(ty, A.ScalarType):
                    self.consts[name] = (convert(v, ty), N.ScalarType(name=ty.name))
                    self.add_qualified_const(self.ns, name, self.consts[name])
                    continue
                if init is None or not isinstance(ty, A.ArrayType):
                    continue
            if type(ty) is AggregateType:  # a struct: one variable per member (see .aggregates)
                leaves = flatten(name, ty)
                items = init.items if isinstance(init, A.InitList) else ()
                if (
                    any(isinstance(t, A.ArrayType) for _, t in leaves)  # not held by value
                    or space == "host_const"
                    or len(items) > len(leaves)
                    or (init is not None and not isinstance(init, A.InitList))
                ):
                    continue  # its uses are undeclared names
                self.globals[name] = ty
                for i, (leaf, lty) in enumerate(leaves):
                    self.globals[leaf] = lty
                    item = items[i] if i < len(items) else None
                    if isinstance(item, A.InitList) and isinstance(lty, A.VectorType):
                        item = vector_ctor(lty, item.items, item.loc)
                    self.global_vars.append(
                        N.GlobalVar(
                            loc=self.placer.at(dnode),
                            name=leaf,
                            ty=lty,
                            init=item,
                            space=space,
                        )
                    )
                continue
            if isinstance(base, AggregateType):  # pointers to and arrays of structs: their bytes
                ty = low.memory_type(ty, dnode)
                if init is not None:
                    init = blob_init(base, ty, init, low.const_value)
                    if init is None:
                        continue  # not constant: its uses are undeclared names
            self.globals[name] = ty
            self.global_vars.append(
                N.GlobalVar(loc=self.placer.at(dnode), name=name, ty=ty, init=init, space=space)
            )

    # ------------------------------------------------------------------ functions

    def signature(self, fd: FuncDef, env: Mapping[str, object]) -> tuple[A.CType, int]:
        """Return type and the number of (non-group) parameters of a function under ``env``."""
        ret, types = self.full_signature(fd, env)
        return ret, len(types)

    def full_signature(
        self, fd: FuncDef, env: Mapping[str, object]
    ) -> tuple[A.CType, tuple[A.CType | None, ...]]:
        """Return type and the (non-group) parameter types (None where not resolvable)."""
        key = (fd.name, fd.order, tuple(sorted((k, repr(v)) for k, v in env.items())))
        got = self._sig_cache.get(key)
        if got is not None:
            return got
        low = BodyLowerer(self, fd.name, dict(env))
        low.kernel = fd.kind == "global"
        try:
            ret = _return_type(low, fd.node)
        except _Placeholder:
            ret = N.OpaqueType(name="?")
        if is_auto(ret):
            ret = deduce_return(self, fd, env)
        types: list[A.CType | None] = []
        refs: list[bool] = []
        if fd.this_struct:  # a member function: its object's member pointers first
            try:
                this = self.this_of(low, fd)
            except _Placeholder:
                this = []
            types.extend(t for _, t in this)
            refs.extend(False for _ in this)
        for p in _param_nodes(fd.node):
            try:
                info = _param_info(low, p, declare=False)
            except _Placeholder:
                info = ("", None, False)
            if info is not None and type(info[1]) is AggregateType:  # its members
                leaves = flatten(info[0], info[1])
                types.extend(t for _, t in leaves)
                refs.extend(False for _ in leaves)
            elif info is not None:
                types.append(info[1])
                refs.append(info[2])
        if type(ret) is AggregateType:  # returned through member pointers
            types.extend(t for _, t in out_params(ret))
            refs.extend(False for _ in out_params(ret))
        self._refs_cache[key] = tuple(refs)
        got = (ret, tuple(types))
        self._sig_cache[key] = got
        return got

    def param_defaults(self, low: BodyLowerer, fd: FuncDef) -> list[ts.Node | None]:
        """For each (non-group) parameter: its default argument's node (``float s = 1.0f``)."""
        out: list[ts.Node | None] = []
        for p in _param_nodes(fd.node):
            if p.kind_id not in _PARAMETER_IDS or _is_cg_param(low, p):
                continue
            if p.child_by_field_id(F.declarator) is None and _text(p).strip() == "void":
                continue
            out.append(p.child_by_field_name("default_value"))
        return out

    def param_refs(self, fd: FuncDef, env: Mapping[str, object]) -> tuple[bool, ...]:
        """For each (non-group) parameter: is it a non-const C++ reference (passed as a pointer)?"""
        self.full_signature(fd, env)
        key = (fd.name, fd.order, tuple(sorted((k, repr(v)) for k, v in env.items())))
        return self._refs_cache.get(key, ())

    def function_name_of(self, fd: FuncDef) -> str:
        """The lowered name: the plain name, ``ns::name`` when namespaces define the name
        more than once, ``name(types)`` when one namespace overloads it."""
        defs = self.overloads.get(fd.name, ())
        if len(defs) <= 1 or fd.is_template or fd.kind == "global":
            return fd.name
        name = fd.name
        if any(d.namespace != fd.namespace for d in defs):
            name = f"{fd.namespace}::{fd.name}" if fd.namespace else fd.name
            if sum(1 for d in defs if d.namespace == fd.namespace) <= 1:
                return name
        _, types = self.full_signature(fd, {})
        return f"{name}({', '.join(type_str(unqualified(t)) for t in types)})"

    def in_namespace(self, name: str, qualifier: str) -> list[FuncDef]:
        """The definitions of ``name`` that ``qualifier::name`` names (``b::f`` names
        ``a::b::f`` too: a ``using namespace a`` may be in force)."""
        q = qualifier.strip(":")
        return [
            d
            for d in self.overloads.get(name, ())
            if d.namespace == q or d.namespace.endswith("::" + q) or (not q and not d.namespace)
        ]

    def pick_overload(
        self, name: str, args: list[A.Expr], namespace: str | None = None
    ) -> FuncDef | None:
        """The definition of ``name`` that fits the call best (arity, then exact types); with
        ``namespace``, among those of that namespace when several namespaces define it."""
        defs = self.overloads.get(name) or []
        if namespace is not None and len({d.namespace for d in defs}) > 1:
            defs = [d for d in defs if d.namespace == namespace] or defs
        if len(defs) <= 1:
            return defs[0] if defs else None
        best, best_score = None, -1
        for fd in defs:
            if fd.is_template:
                n = len(_param_nodes(fd.node))
                score = 0 if n == len(args) else -1
            else:
                _, types = self.full_signature(fd, {})
                if len(types) != len(args):
                    continue
                score = 1 + sum(1 for t, a in zip(types, args) if _same_type(t, a.ty))
            if score > best_score:
                best, best_score = fd, score
        return best

    def resolve_call(
        self,
        low: BodyLowerer,
        node: ts.Node,
        name: str,
        fd: FuncDef,
        args: list[A.Expr],
        targs: list[A.Expr | A.CType],
        groups: list[tuple[str, int] | None] | None = None,
    ) -> tuple[str, A.CType | None, int | None, tuple[bool, ...]]:
        """Target name, return type, parameter count and reference flags of a user call;
        ``groups``: per argument, the cooperative group it is (kind, tile size), else None."""
        fd = self.pick_overload(name, args, fd.namespace) or fd
        if fd.kind in ("global", "host"):
            raise low.fail("C2N1021", node, name=name)
        genv = group_env(fd, _param_nodes(fd.node), groups) if groups else {}
        if groups and any(groups):  # the groups were dropped from the call's arguments
            args = [a for a, g in zip(args, groups) if g is None]
        if not fd.is_template and not genv:
            ret, n = self.signature(fd, {})
            return self.function_name_of(fd), ret, n, self.param_refs(fd, {})
        if not fd.is_template:  # generic over the group it is given: one instance per group
            env: dict = dict(genv)
            inst = generic_instance_name(self.function_name_of(fd), genv)
        else:
            env = self.deduce(low, node, fd, args, targs, genv)
            inst = instance_name(name, fd, env)
        if len(self.overloads.get(fd.name, ())) > 1:  # overloaded templates: one name each
            _, types = self.full_signature(fd, env)
            inst += f"({', '.join(type_str(unqualified(t)) for t in types)})"
        if inst not in self.instances and inst not in self.in_progress:
            self.lower_instance(fd, env, inst)
        ret, n = self.signature(fd, env)
        return inst, ret, n, self.param_refs(fd, env)

    def deduce(
        self,
        low: BodyLowerer,
        node: ts.Node,
        fd: FuncDef,
        args: list[A.Expr],
        targs: list[A.Expr | A.CType],
        seed: Mapping[str, GroupArg] | None = None,
    ) -> dict[str, int | A.CType | None]:
        if not fd.template_ok:
            raise low.fail("C2N1024", node, name=fd.name, reason="unsupported template parameters")
        env: dict = dict(seed or {})
        for (pname, kind, _d, _n), ta in zip(fd.template_params, targs):
            env[pname] = self._targ_value(low, node, fd, pname, kind, ta)
        if len(targs) > len(fd.template_params):
            raise low.fail("C2N1024", node, name=fd.name, reason="too many template arguments")
        self.deduce_types(low, fd, args, env)
        for pname, kind, default, _n in fd.template_params:
            if pname in env:
                continue
            if default is None:
                raise low.fail(
                    "C2N1024",
                    node,
                    name=fd.name,
                    reason=f"cannot deduce template parameter '{pname}'",
                )
            dl = BodyLowerer(self, fd.name, dict(env))
            try:
                if kind == "int":
                    v = dl.const_int_node(default)
                    if v is None:
                        raise _Placeholder()
                    env[pname] = convert(v, dl.template_value_type(pname))
                else:
                    env[pname] = (
                        dl.type_descriptor(default)
                        if default.type == "type_descriptor"
                        else dl.type_of(default)
                    )
            except _Placeholder:
                raise low.fail(
                    "C2N1024", node, name=fd.name, reason=f"bad default for '{pname}'"
                ) from None
        return env

    def deduce_types(
        self, low: BodyLowerer, fd: FuncDef, args: list[A.Expr] | tuple[A.Expr, ...], env: dict
    ) -> None:
        """``typename`` parameters of ``fd`` not in ``env`` deduced from the types of the call's
        (or launch's) arguments: ``T* out`` with an argument of type ``float*`` gives
        ``T = float`` (the first argument that fixes a parameter wins; arguments of unknown type
        fix nothing)."""
        kinds = {p[0]: p[1] for p in fd.template_params}
        pnodes = [p for p in _param_nodes(fd.node)]
        non_group = [p for p in pnodes if not _is_cg_param(low, p) and not is_group_bound(env, p)]
        for p, a in zip(non_group, args):
            t = p.child_by_field_id(F.type)
            if t is not None and t.type == "qualified_identifier":
                _deduce_tag_value(low, t, a, kinds, env)  # std::bool_constant<B>
                continue
            if t is None or t.type != "type_identifier":
                continue
            tname = _text(t)
            if kinds.get(tname) != "typename" or tname in env:
                continue
            aty = a.ty
            d = p.child_by_field_id(F.declarator)
            while d is not None and d.type in (
                "pointer_declarator",
                "array_declarator",
                "reference_declarator",
            ):
                if d.type == "reference_declarator":
                    d = next((c for c in d.named_children if c.kind_id not in COMMENT_IDS), None)
                    continue
                if isinstance(aty, (A.PointerType,)):
                    aty = aty.pointee
                elif isinstance(aty, A.ArrayType):
                    aty = aty.elem
                d = d.child_by_field_id(F.declarator)
            if aty is not None:
                env[tname] = unqualified(aty)

    def _targ_value(
        self,
        low: BodyLowerer,
        node: ts.Node,
        fd: FuncDef,
        pname: str,
        kind: str,
        ta: A.Expr | A.CType,
    ) -> int | A.CType | A.FunctionRef:
        if kind == "function":
            ref = function_ref(self, ta)
            if ref is None:
                raise low.fail(
                    "C2N1024", node, name=fd.name, reason=f"'{pname}' needs a device function"
                )
            return ref
        if kind == "int":
            if isinstance(ta, A.Expr):
                v = low.const_value(ta)
                if isinstance(v, int):
                    return convert(
                        v, BodyLowerer(self, fd.name, host=True).template_value_type(pname)
                    )
            raise low.fail(
                "C2N1024", node, name=fd.name, reason=f"'{pname}' needs an integer constant"
            )
        if isinstance(ta, A.Expr):
            raise low.fail("C2N1024", node, name=fd.name, reason=f"'{pname}' needs a type")
        return ta

    def lower_function(
        self,
        fd: FuncDef,
        env: dict[str, int | A.CType | None] | None = None,
        name: str | None = None,
        keep_params: bool = False,
    ) -> A.Function | None:
        """Lower one function under a template environment; record a rejection on error."""
        fname = name or fd.name
        err = first_error(fd.node)
        if err is not None:
            self.rejected[fname] = [
                make("C2N1001", self.loc(err), func=fd.name, what=describe_error(err))
            ]
            return None
        env = dict(env or {})
        for _attempt in range(64):
            low = BodyLowerer(self, fd.name, env)
            low.kernel = fd.kind == "global"
            fnode = fd.node
            try:
                ret = _return_type(low, fnode)
                low.return_type = ret
                params = self._params(low, fnode)
                if fd.this_struct:  # a member function: its object's member pointers first
                    at = self.placer.at(fnode)
                    this = [N.Param(loc=at, name=n, ty=t) for n, t in self.this_of(low, fd)]
                    params = (*this, *params)
                if type(ret) is AggregateType:  # returned through member pointers
                    at = self.placer.at(fnode)
                    outs = [N.Param(loc=at, name=n, ty=t) for n, t in out_params(ret)]
                    params, ret = (*params, *outs), VOID
                bounds = self._launch_bounds(low, fnode)
                body_node = fnode.child_by_field_id(F.body)
                body = low.block(body_node, new_scope=True) if body_node is not None else None
                if is_auto(ret):
                    ret = deduced(low)
                if body is not None and low.prologue:  # parameters copied first
                    body = dataclasses.replace(body, body=(*low.prologue, *body.body))
                if body is not None and low.smem_arrays:  # see BodyLowerer.smem_view
                    body = dataclasses.replace(body, body=(*low.smem_arrays.values(), *body.body))
                break
            except _Placeholder:
                body = None
                break
            except RecursionError:
                low.error("C2N1010", fnode, what="expression nesting too deep")
                body = None
                break
            except INTERNAL_ERRORS as exc:  # a front-end bug outside any statement: this function
                if os.environ.get("CUDA2NKI_DEBUG"):
                    raise
                low.error("C2N0005", fnode, reason=f"front end: {type(exc).__name__} {exc}".strip())
                body = None
                break
            except Reparse as r:
                new = self._reparse(fnode, r.offset, r.close, r.brace)
                if new is None:
                    what = "ambiguous '<' (template or comparison)"
                    if r.close is not None:
                        what = "ambiguous parenthesised name (cast or value)"
                    low.error("C2N1010", fnode, what=what)
                    body = None
                    break
                fd.node = new
        else:
            body = None
        self.graph[fname] = low.calls
        if low.file_shared_used:
            self.file_shared_uses[fname] = low.file_shared_used
        errors = []
        if low.diags:
            errors = low.errors
            self.diags.extend(d for d in low.diags if d.severity < Severity.ERROR)
        if errors or body is None:
            self.rejected[fname] = errors or [make("C2N1010", self.loc(fnode), what="function")]
            return None
        tparams = ()
        if fd.template_params and (keep_params or any(v is None for v in env.values())):
            tparams = self._template_params(low, fd)
        targs = ()
        if not tparams and env:  # in the order of the parameters
            order = [p[0] for p in fd.template_params]
            order += [k for k in env if k not in order]
            targs = tuple(
                (k, env[k])
                for k in order
                if env.get(k) is not None and not isinstance(env[k], GroupArg)
            )
        return N.Function(
            loc=self.placer.at(fnode),
            name=fname,
            kind=fd.kind,
            params=params,
            return_type=ret,
            body=body,
            template_params=tparams,
            template_args=targs,
            launch_bounds=bounds,
            forceinline=fd.forceinline,
        )

    def keep(self, tree: ts.Tree) -> None:
        """Keep a secondary parse tree alive as long as the unit (its nodes are in use)."""
        self._trees.append(tree)

    def _reparse(
        self, fnode: ts.Node, offset: int, close: int | None = None, brace: bool = False
    ) -> ts.Node | None:
        """Respell the ``<`` at ``offset`` as ``>`` (same width and precedence), parse again,
        and remember to read that operator back as ``<``; with ``close``, blank the parentheses
        at ``offset`` and ``close`` instead (a variable's name in parentheses means the name).
        Returns the function's new node."""
        from cuda2nki.frontend.cst import parse_bytes

        src = self.src
        if close is not None:
            if src[offset : offset + 1] != b"(" or src[close : close + 1] != b")":
                return None
            lp, rp = (b"{", b"}") if brace else (b" ", b" ")  # `T x(v);` reads as `T x{v};`
            src = src[:offset] + lp + src[offset + 1 : close] + rp + src[close + 1 :]
            self.src = src
        else:
            if src[offset : offset + 1] != b"<" or offset in self.op_override:
                return None
            self.src = src[:offset] + b">" + src[offset + 1 :]
            self.op_override[offset] = "<"
        a, b = fnode.start_byte, fnode.end_byte  # the function alone, the rest blanked
        blank = _BLANK_RE.sub
        tree = parse_bytes(blank(b" ", self.src[:a]) + self.src[a:b] + blank(b" ", self.src[b:]))
        self._trees.append(tree)
        n = tree.root_node.descendant_for_byte_range(fnode.start_byte, fnode.end_byte)
        while n is not None and not (
            n.type == "function_definition" and n.start_byte == fnode.start_byte
        ):
            n = n.parent
        return n

    def lower_instance(self, fd: FuncDef, env: dict, inst: str) -> None:
        self.in_progress.add(inst)
        try:
            f = self.lower_function(fd, env, name=inst)
        finally:
            self.in_progress.discard(inst)
        if f is not None:
            self.instances[inst] = f

    def _template_params(self, low: BodyLowerer, fd: FuncDef) -> tuple[A.TemplateParam, ...]:
        out = []
        for pname, kind, default, pnode in fd.template_params:
            d: A.Expr | A.CType | None = None
            if default is not None:
                try:
                    d = low._template_arg(default)
                except _Placeholder:
                    d = None
            out.append(N.TemplateParam(loc=self.placer.at(pnode), name=pname, kind=kind, default=d))
        return tuple(out)

    def _params(self, low: BodyLowerer, fnode: ts.Node) -> tuple[A.Param, ...]:
        out: list[A.Param] = []
        for p in _param_nodes(fnode):
            got = _param_info(low, p, declare=True)
            if got is not None and type(got[1]) is AggregateType:  # one per member
                at = self.placer.at(p)
                out.extend(N.Param(loc=at, name=n, ty=t) for n, t in flatten(got[0], got[1]))
            elif got is not None:
                name, ty, _ref = got
                if not _ref and isinstance(ty, A.VectorType) and low.blob_struct(ty) is not None:
                    if not low.member_wise(ty):  # a union by value: copied into its bytes
                        name, first = low.bytes_param(p, name, ty)
                        low.prologue.extend(first)
                rows = written_extents(low, p)  # `float w[6][5][5]`: its declared extents
                out.append(N.Param(loc=self.placer.at(p), name=name, ty=ty, rows=rows))
        return tuple(out)

    def _launch_bounds(self, low: BodyLowerer, fnode: ts.Node) -> tuple[int, ...]:
        for c in fnode.children:
            if c.type == "launch_bounds":
                vals = []
                for a in c.named_children:
                    if a.kind_id in COMMENT_IDS:
                        continue
                    v = low.const_int_node(a)
                    if v is None and any(x is None for x in low.env.values()):
                        return ()  # depends on a template parameter not yet known
                    if v is None:
                        raise low.fail(
                            "C2N1030", a, what="__launch_bounds__ argument is not a constant"
                        )
                    vals.append(v)
                return tuple(vals)
        return ()


# ---------------------------------------------------------------------- CST helpers


def _param_info(
    low: BodyLowerer, p: ts.Node, declare: bool
) -> tuple[str, A.CType | None, bool] | None:
    """(name, type, is_reference) of a parameter; None for a group or ``void``.  A non-const
    ``T&`` parameter is passed as ``T*`` (uses read through it); a ``const T&`` is a copy."""
    if p.kind_id not in _PARAMETER_IDS:
        raise low.fail("C2N1010", p, what=p.type.replace("_", " "))
    t = p.child_by_field_id(F.type)
    d = p.child_by_field_id(F.declarator)
    if t is not None and t.kind_id not in _PRIMITIVE_IDS and low._is_cg_type(t):
        g = bound_group(low.env, p, t)
        kind, n = (g.kind, g.tile) if g is not None else low._cg_size_from_type(t)
        if declare and d is not None:
            low.declare(_text(d).lstrip("&* "), Sym(None, cg=kind, tile=n))
        return None
    if t is not None and d is not None and p.child_count == 2:
        quals: tuple[ts.Node, ...] = ()  # its two children are the type and the declarator
    else:
        quals = tuple([c for c in p.children if c.kind_id in QUALIFIER_IDS])
    base = low.type_of(t, quals)
    if isinstance(base, A.ScalarType) and base.name == "void" and d is None:
        return None
    if d is None:
        if not isinstance(base, A.ScalarType):
            raise low.fail("C2N1030", p, what="unnamed parameter")
        # an unnamed value parameter (a tag: std::bool_constant<B>): named by its position
        idx, sib = 0, p.prev_named_sibling
        while sib is not None:
            idx += sib.kind_id in _PARAMETER_IDS
            sib = sib.prev_named_sibling
        name = f"__unnamed{idx}"
        if declare:
            low.declare(name, Sym(base))
        return name, base, False
    ref = d.kind_id in _REFERENCE_DECLARATOR_IDS
    if ref:
        inner = [c for c in d.named_children if c.kind_id not in COMMENT_IDS]
        if not inner:
            raise low.fail("C2N1030", p, what="unnamed parameter")
        d = inner[0]
    name, ty = low._declarator_type(d, base)
    if isinstance(ty, A.ArrayType):  # T a[] / T a[N] parameters decay to pointers
        inner_t = ty.elem if len(ty.dims) == 1 else N.ArrayType(elem=ty.elem, dims=ty.dims[1:])
        ty = N.PointerType(pointee=inner_t)
    if ref and getattr(ty, "const", False):
        ref = False  # const T&: a copy
    elif ref and type(ty) is AggregateType and unchanged_reference(_function_of(p), name):
        ref = False  # a struct the function only reads (see .refcopy): a copy too
    if ref:
        ty = N.PointerType(pointee=ty)
    if type(ty) is AggregateType:
        if low.kernel:  # a kernel's by-value array member: a buffer it reads
            ty = decay_array_members(ty)
        low.check_by_value(p, ty)  # type: ignore[arg-type]
    else:
        ty = low.memory_type(ty, p)
    if declare:
        low.declare(name, Sym(ty, ref=ref))
    return name, ty, ref


def _function_of(n: ts.Node) -> ts.Node | None:
    while n is not None and n.type != "function_definition":
        n = n.parent
    return n


def _array_typedef(low: BodyLowerer, d: ts.Node, base: A.CType) -> tuple[str, A.ArrayType] | None:
    """``typedef float mat3[3][3];``: the name and its array type (None: a size not constant)."""
    dims: list[int] = []
    while d is not None and d.type == "array_declarator":
        size = d.child_by_field_id(F.size)
        n = low.const_int_node(size) if size is not None else None
        if n is None or n < 1:
            return None
        dims.insert(0, n)
        d = d.child_by_field_id(F.declarator)
    if d is None or d.type != "type_identifier":
        return None
    return _text(d), N.ArrayType(elem=base, dims=tuple(dims))  # type: ignore[arg-type]


def _same_type(p: A.CType | None, a: A.CType | None) -> bool:
    if p is None or a is None:
        return False
    if isinstance(p, A.PointerType) and isinstance(a, (A.PointerType, A.ArrayType)):
        pe = a.pointee if isinstance(a, A.PointerType) else a.elem
        return unqualified(p.pointee) == unqualified(pe)
    return unqualified(p) == unqualified(a)


def _is_function_declarator(d: ts.Node) -> bool:
    while d is not None:
        if d.type == "function_declarator":
            return True
        if d.type in ("pointer_declarator", "init_declarator", "reference_declarator"):
            d = d.child_by_field_id(F.declarator)
        else:
            return False
    return False


def _function_declarator(fnode: ts.Node) -> ts.Node | None:
    d = fnode.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        d = _inner_declarator(d)
    return d


def _inner_declarator(d: ts.Node) -> ts.Node | None:
    """The declarator inside ``d`` (a reference declarator holds it without a field name)."""
    got = d.child_by_field_id(F.declarator)
    if got is None and d.type == "reference_declarator":
        got = next((c for c in d.named_children if c.kind_id not in COMMENT_IDS), None)
    return got


def _param_nodes(fnode: ts.Node) -> list[ts.Node]:
    fd = _function_declarator(fnode)
    pl = fd.child_by_field_id(F.parameters) if fd is not None else None
    return [c for c in pl.named_children if c.kind_id not in COMMENT_IDS] if pl is not None else []


def _is_cg_param(low: BodyLowerer, p: ts.Node) -> bool:
    t = p.child_by_field_id(F.type)
    return t is not None and low._is_cg_type(t)


def _returns_reference(fnode: ts.Node) -> bool:
    d = fnode.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        if d.type == "reference_declarator":
            return True
        d = d.child_by_field_id(F.declarator) or next(
            (c for c in d.named_children if c.type != "type_qualifier"), None
        )
    return False


def _return_type(low: BodyLowerer, fnode: ts.Node) -> A.CType:
    quals = tuple([c for c in fnode.children if c.kind_id in QUALIFIER_IDS])
    t = low.type_of(fnode.child_by_field_id(F.type), quals)
    d = fnode.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        if d.type == "pointer_declarator":
            t = N.PointerType(pointee=t)
        elif d.type == "reference_declarator":  # `T& f()`: returns the address (see .methods)
            if not low.u.ref_return_ok(fnode):
                raise low.fail("C2N1025", d, what="function returning a reference")
            t = N.PointerType(pointee=t)
            low.returns_ref = True
        d = _inner_declarator(d)
    return t


def function_name(fnode: ts.Node) -> str | None:
    d = _function_declarator(fnode)
    if d is None:
        return None
    n = d.child_by_field_id(F.declarator)
    if n is None:
        return None
    text = _text(n)
    if n.type == "template_function":
        text = _text(n.child_by_field_id(F.name))
    return text.split("::")[-1].strip()


_DEVICE_KINDS = frozenset(("device", "host_device"))


def function_kind(fnode: ts.Node) -> tuple[str, bool]:
    words = set()
    for c in fnode.children:
        if not c.is_named:
            words.add(c.type)
        elif c.type in ("storage_class_specifier", "type_qualifier", "attribute_specifier"):
            words.add(_text(c))
    if "__global__" in words:
        kind = "global"
    elif "__device__" in words:
        kind = "host_device" if "__host__" in words else "device"
    elif "constexpr" in words:  # callable from device code (nvcc --expt-relaxed-constexpr)
        kind = "host_device"
    else:
        kind = "host"
    return kind, "__forceinline__" in words


def function_ref(unit: UnitContext, ta: object) -> A.FunctionRef | None:
    """The device function a template argument names (``warpReduceSum``, ``&warpReduceSum``)."""
    if isinstance(ta, A.FunctionRef):
        return ta
    if isinstance(ta, A.Unary) and ta.op == "&":
        ta = ta.operand
    if isinstance(ta, A.Name) and ta.ty is None:
        parts = ta.name.split("::")
        defs = unit.in_namespace(parts[-1], "::".join(parts[:-1])) if len(parts) > 1 else []
        fd = defs[0] if defs else unit.functions.get(ta.name)
        if fd is not None and fd.kind in ("device", "host_device"):
            return N.FunctionRef(name=ta.name)
    return None


def _function_pointer_typedef(node: ts.Node) -> str | None:
    """The name a ``typedef``/``using`` gives a function-pointer type, else None."""
    if node.type == "alias_declaration":
        t = node.child_by_field_id(F.type)
        d = t.child_by_field_id(F.declarator) if t is not None else None
        if d is not None and d.type == "abstract_function_declarator":
            return _text(node.child_by_field_id(F.name))
        return None
    for i, c in enumerate(node.children):
        if node.field_name_for_child(i) == "declarator" and c.type == "function_declarator":
            inner = c.child_by_field_id(F.declarator)
            while inner is not None and inner.type in (
                "parenthesized_declarator",
                "pointer_declarator",
            ):
                inner = (
                    inner.child_by_field_id(F.declarator)
                    if inner.type == "pointer_declarator"
                    else next((x for x in inner.named_children if x.type != "comment"), None)
                )
            if inner is not None and inner.type == "type_identifier":
                return _text(inner)
    return None


def instance_name(name: str, fd: FuncDef, env: Mapping[str, object]) -> str:
    vals = []
    for pname, _k, _d, _n in fd.template_params:
        v = env.get(pname)
        if isinstance(v, int | GroupArg):
            vals.append(str(v))
        else:
            vals.append(type_str(v))  # type: ignore[arg-type]
    return f"{name}<{', '.join(vals)}>"


def parse_template_value(text: str, unit: UnitContext) -> int | A.CType | None:
    """A ``--template NAME=VALUE`` value: an integer literal or a type name."""
    t = text.strip()
    if t in ("true", "false"):
        return int(t == "true")
    neg = t.startswith("-")
    got = int_literal(t[1:] if neg else t)
    if got is not None:
        return -got[0] if neg else got[0]
    if float_literal(t) is not None:
        return None
    ty = named_type(t) or unit.typedefs.get(t)
    if ty is None and t.endswith("*"):
        base = named_type(t[:-1].strip())
        if base is not None:
            return N.PointerType(pointee=base)
    return ty


def _deduce_tag_value(low: BodyLowerer, t: ts.Node, arg: A.Expr, kinds: dict, env: dict) -> None:
    """A parameter ``std::bool_constant<B>`` (``std::integral_constant<T, N>``) given a
    constant argument (``std::bool_constant<true>{}``): ``B`` is that constant."""
    leaf = t.child_by_field_id(F.name)
    if leaf is None or leaf.type != "template_type":
        return
    args = leaf.child_by_field_id(F.arguments)
    kids = [c for c in args.named_children if c.kind_id not in COMMENT_IDS] if args else []
    if not kids:
        return
    vnode = kids[-1]
    inner = vnode.child_by_field_id(F.type) if vnode.type == "type_descriptor" else vnode
    pname = _text(inner) if inner is not None else ""
    if kinds.get(pname) != "int" or pname in env:
        return
    v = low.const_value(arg)
    if isinstance(v, int | bool):
        env[pname] = convert(int(v), low.template_value_type(pname))
