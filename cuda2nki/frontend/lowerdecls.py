"""Declarations in the body lowering: local variables, arrays, initialisers and
references (a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.coalesced import MASKED, declare_masked
from cuda2nki.frontend.constfold import convert as _convert
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    QUALIFIER_IDS,
    STORAGE_CLASS_IDS,
    F,
)
from cuda2nki.frontend.dim3 import dim3_declaration, is_dim3
from cuda2nki.frontend.directinit import direct_initialiser
from cuda2nki.frontend.lowerbase import (
    REFUSED,
    Sym,
    _Placeholder,
    _text,
    address_of,
    declared_name,
    is_lvalue,
)
from cuda2nki.frontend.lowertables import (
    _ARGUMENT_LIST_IDS,
    _BRACE_OR_ARGS_IDS,
    _CALL_IDS,
    _IDENTIFIER_IDS,
    _INIT_DECLARATOR_IDS,
    _INITIALIZER_LIST_IDS,
    _PRIMITIVE_IDS,
    _REFERENCE_DECLARATOR_IDS,
    _vector_ctor,
)
from cuda2nki.frontend.typesys import (
    INT,
    unqualified,
    with_const,
)
from cuda2nki.frontend.wmma import is_fragment_type

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object


class DeclarationLowering(_Base):
    """Declarations in the body lowering: local variables, arrays, initialisers and"""

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
        if type_node is not None and is_dim3(self, type_node):
            return dim3_declaration(self, node)  # `dim3 p(x, y);`: missing axes are 1
        decls = node.children_by_field_id(F.declarator)
        try:
            base = self.type_of(type_node, tuple(quals))
        except _Placeholder:  # its names stay known (see lowerbase.REFUSED)
            for name in filter(None, map(declared_name, decls)):
                self.declare(name, Sym(REFUSED))
            raise
        if len(decls) == 1:  # the common case: its statements are the declaration's
            out = self._kept_declarator(decls[0], base, storage, extern, constexpr)
        else:
            out = []
            for c in decls:
                out.extend(self._kept_declarator(c, base, storage, extern, constexpr))
        if type(base) is A.ArrayType and is_fragment_type(type_node):
            self.note_fragments(type_node, out)
        return out

    def _kept_declarator(
        self, decl: ts.Node, base: A.CType, storage: str, extern: bool, constexpr: bool
    ) -> list[A.Stmt]:
        """:meth:`_declarator`; refused, its name stays known (see lowerbase.REFUSED)."""
        try:
            return self._declarator(decl, base, storage, extern, constexpr)
        except _Placeholder:
            name = declared_name(decl)
            if name is not None and name not in self.scopes[-1]:
                self.declare(name, Sym(REFUSED))
            raise

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
            rest = self._declarator(outer, base, storage, extern, constexpr)
            self.lambda_done(value)  # type: ignore[arg-type]
            return pre + rest
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
                    init = self._expr_by_id[k](self, value)
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
        if self.blob_struct(init.ty) is not None:  # a struct in memory: a pointer to its bytes
            ty = with_const(init.ty, getattr(ty, "const", False) or init.ty.const)
        if not is_lvalue(init):
            if not getattr(ty, "const", False):
                raise self.fail("C2N1030", value, what="non-const reference to a temporary")
            self.declare(name, Sym(ty))
            return [N.VarDecl(loc=loc, name=name, ty=ty, init=init)]
        if isinstance(ty, AggregateType):  # `S& r = p[i];`: the struct's bytes in memory
            if self.blob_struct(init.ty) is None:
                raise self.fail("C2N1025", decl, what=f"reference to struct variable '{ty.name}'")
            ty = init.ty
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
                if dims:  # `(*rows)[8]`: a pointer to the arrays declared outside it
                    t, dims = N.ArrayType(elem=t, dims=tuple(dims)), []
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
                direct_initialiser(self, node)  # `float lo(v);`: raises Reparse
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
            return self._expr_by_id[k](self, value)
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
