"""Types in the body lowering: type specifiers, declarators, template arguments and
type names resolved to :mod:`cuda2nki.frontend.ast` types (a mixin of
:class:`cuda2nki.frontend.lower.BodyLowerer`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    QUALIFIER_IDS,
    F,
)
from cuda2nki.frontend.devlaunch import (
    DEVICE_RUNTIME_TYPES,
)
from cuda2nki.frontend.dim3 import dim3_type
from cuda2nki.frontend.lowerbase import (
    TEXTURE_TYPES,
    _Placeholder,
    _text,
)
from cuda2nki.frontend.lowertables import _PRIMITIVE_IDS, std_constant
from cuda2nki.frontend.packed import PackedInstance, PackedStruct
from cuda2nki.frontend.staticmembers import template_tag, traits_type
from cuda2nki.frontend.stmtexpr import typeof_type
from cuda2nki.frontend.surface import SURFACE_TYPE
from cuda2nki.frontend.texture import OBJECT_TYPE
from cuda2nki.frontend.typesys import (
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    NAMED_TYPES,
    UINT,
    ULONG,
    S,
    named_type,
    unqualified,
    with_const,
)
from cuda2nki.frontend.wmma import is_fragment_type

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object


class TypeLowering(_Base):
    """Types in the body lowering: type specifiers, declarators, template arguments and"""

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
        elif kind == "decltype":  # `decltype(e)`, `__typeof__(e)` (see .stmtexpr)
            t = typeof_type(self, type_node)
        elif kind in ("placeholder_type_specifier", "auto"):
            return N.OpaqueType(name="auto", const=const)
        elif kind == "template_type":
            t = self.struct_instance(type_node) if self.u.struct_templates else None
            if t is None and self.u.static_structs:
                t = template_tag(self, type_node)  # `Tiles<128, 4>`: a traits tag
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
        if head in (OBJECT_TYPE, SURFACE_TYPE) and not self.host:
            return N.OpaqueType(name=head)  # read by its accesses (frontend.texture, .surface)
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
        sub = type(self)(self.u, self.func_name, env=env)
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

    def limits_type(self, name: str) -> A.CType | None:
        """The type ``name`` stands for in ``numeric_limits<name>``: an enclosing template's
        type parameter or a typedef; None otherwise (never a diagnostic)."""
        v = self.env.get(name)
        if isinstance(v, A.ScalarType):
            return v
        if name in self.env:
            return None
        t = self.u.typedefs.get(name)
        return t if isinstance(t, A.ScalarType) else None

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
        if t is None and not self.host:
            t = dim3_type(name)  # a `dim3` local (see .dim3)
        if t is None and name in self.u.static_structs:
            t = traits_type(self, name)  # a traits struct: a tag (see .staticmembers)
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
        arrays = False  # the previous declarator was an array's
        while decl is not None:
            arrays_before, arrays = arrays, False
            if decl.type == "abstract_pointer_declarator":
                pq = [_text(c) for c in decl.children if c.kind_id in QUALIFIER_IDS]
                t = N.PointerType(pointee=t, const="const" in pq, restrict="__restrict__" in pq)
                decl = decl.child_by_field_id(F.declarator)
            elif decl.type == "abstract_array_declarator":
                size = decl.child_by_field_id(F.size)
                dim = None if size is None else self.const_int_node(size)
                # `[2][3]`: the outer declarator is the last bound; one array of both dims
                if arrays_before and isinstance(t, A.ArrayType):
                    t = N.ArrayType(elem=t.elem, dims=(dim, *t.dims))
                else:
                    t = N.ArrayType(elem=t, dims=(dim,))
                decl = decl.child_by_field_id(F.declarator)
                arrays = True
            elif decl.type in (
                "abstract_reference_declarator",
                "abstract_parenthesized_declarator",
            ):
                decl = next((c for c in decl.named_children), None)  # `(float (*)[24])p`
            else:
                raise self.fail("C2N1025", decl, what=_text(node))
        return t
