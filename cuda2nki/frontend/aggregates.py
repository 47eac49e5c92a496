"""Structs whose members have different types, passed and held by value (scalar replacement).

``typedef struct { int width; int height; int stride; float* elements; } Matrix;`` passed to a
kernel by value, held in locals and passed to and returned from ``__device__`` helpers is the
CUDA programming guide's own style, and parameter blocks such as
``struct State { int rows; int* pivot; unsigned char* done; }`` are everywhere.  Unlike a record
struct (:mod:`cuda2nki.frontend.records`, one member type: a short vector), such a struct has no
vector form.  Held by value, it never needs one: the front end replaces every struct variable by
one variable per member (scalar replacement of aggregates), so the AST only ever holds scalars,
vectors and pointers:

* a parameter ``Matrix A`` becomes the parameters ``A__width, A__height, A__stride,
  A__elements`` (in member order; a nested struct member is flattened in turn:
  ``s__inner__x``); a call passes the members of its argument in the same order;
* a local ``Matrix s;`` becomes one ``VarDecl`` per member (``Matrix s = t;`` copies member by
  member, ``Matrix s = {a, b};`` initialises them in order, missing ones zero);
* ``s.member`` is the member's variable; ``s = t`` assigns member by member;
* a function returning the struct instead takes one pointer per member (``__ret__width``...)
  after its parameters and returns nothing: ``return s;`` stores the members through them, and
  ``Matrix s = f(...)`` / ``s = f(...)`` pass the addresses of ``s``'s members.

A struct in memory (reached through a pointer, or an array of structs) is its bytes: a
``uint8`` vector type named after the struct, of the struct's C size and alignment
(:meth:`AggregateLowering.blob_of`), so that pointer arithmetic and indexing step over whole
structs.  ``p->member`` and ``p[i].member`` read or write the member through a pointer to its
byte offset in the C layout (an array member decays to a pointer to its first element);
``S s = p[i];`` and ``p[i] = s;`` copy member by member, ``p[i] = q[j];`` copies the bytes.

Member functions defined in the body are lowered as device functions (see
:mod:`cuda2nki.frontend.methods`).  A union, and a struct with bit-fields, is held in its bytes
also by value (see :mod:`cuda2nki.frontend.unions`).  A struct with a base class, or virtual or
static member functions, a struct holding an array copied, passed or returned by value, and a struct
value used other than through its members stay refused (C2N1025).  A local holding an array
declares that array as a local array; a kernel parameter holding one receives it as a buffer
(:func:`decay_array_members`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import _text, address_of
from cuda2nki.frontend.memberdefaults import (
    default_of,
    default_stores,
    is_empty_default,
    member_default,
)
from cuda2nki.frontend.typesys import VOID
from cuda2nki.frontend.unions import (
    ANON,
    PAD,
    BitField,
    BitFieldLowering,
    c_layout,
    member_path,
)

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

RET = "__ret"  # the prefix of a struct-returning function's member out-pointers
SELF = "<struct itself>"  # the pointee of a member pointing to its own struct, until defined
_STRUCT_KINDS = ("struct_specifier", "class_specifier", "union_specifier")
_SKIPPED = ("access_specifier", "comment")


@dataclass(frozen=True)
class AggregateDef:
    """An aggregate struct as written: its name and, per member, its name, type node,
    qualifiers and (pointer) declarator."""

    name: str
    members: tuple[tuple[str, ts.Node, tuple[ts.Node, ...], ts.Node], ...]
    #: member functions defined in the body: (name, definition), see .methods
    methods: tuple[tuple[str, ts.Node], ...] = ()
    #: a constructor is defined (a local of this type needs an initialiser)
    has_ctor: bool = False
    #: its base classes: it is an aggregate only when none has data members
    bases: tuple[str, ...] = ()
    #: a union (see :mod:`cuda2nki.frontend.unions`)
    union: bool = False
    #: its anonymous struct and union members, named ``Outer::__anonN``
    nested: tuple[AggregateDef, ...] = ()
    #: default member initialisers: (member name, value node), see .memberdefaults
    defaults: tuple[tuple[str, ts.Node], ...] = ()
    #: a default constructor that does nothing (``S() {}``): ``S s;`` needs no call of it
    empty_default: bool = False


@dataclass(frozen=True)
class AggregateType:
    """The type of a struct variable under scalar replacement (front-end only: no AST node has
    it once lowering is done).  ``fields``: (member name, member type) in order."""

    name: str
    fields: tuple[tuple[str, object], ...]
    const: bool = False
    #: a kernel parameter whose array members are buffers (see :func:`decay_array_members`):
    #: it is read through its members only, never copied or passed on
    decayed: bool = False
    #: a union, or a struct with bit-fields: held in its bytes also by value (see
    #: :mod:`cuda2nki.frontend.unions`)
    union: bool = False

    @property
    def in_bytes(self) -> bool:
        return self.union or any(isinstance(t, BitField) for _, t in self.fields)


def flat_name(var: str, member: str) -> str:
    """The variable that stands for ``var.member``."""
    return f"{var}__{member}"


def flatten(var: str, ty: AggregateType) -> list[tuple[str, A.CType]]:
    """The (variable, type) leaves standing for the struct variable ``var``."""
    out: list[tuple[str, A.CType]] = []
    for member, mty in ty.fields:
        name = flat_name(var, member)
        if isinstance(mty, AggregateType):
            out.extend(flatten(name, mty))
        else:
            out.append((name, mty))  # type: ignore[arg-type]
    return out


def _member_names(
    decl: ts.Node, defaults: dict[str, ts.Node] | None = None
) -> list[tuple[str, ts.Node]] | None:
    """(name, declarator) per member of one ``field_declaration``; None when one is a
    function or not a plain name.  A default member initialiser (``int n = 0;``, ``float
    v[3] = {0, 0, 0};``) goes to ``defaults`` by member name (None: refused)."""
    out: list[tuple[str, ts.Node]] = []
    bits = [c for c in decl.children if c.type == "bitfield_clause"]
    if bits:  # `unsigned kind : 3;`: the clause stands for the declarator; unnamed: padding
        d = decl.child_by_field_id(F.declarator)
        name = _text(d) if d is not None and d.type == "field_identifier" else ""
        return [(name or f"{PAD}{decl.start_byte}", bits[0])]
    for i, c in enumerate(decl.children):
        fname = decl.field_name_for_child(i)
        if fname == "default_value":
            if defaults is None or not out:
                return None
            defaults[out[-1][0]] = c
            continue
        if fname != "declarator":
            continue
        d = c
        while d is not None and d.type in ("pointer_declarator", "array_declarator"):
            d = d.child_by_field_id(F.declarator)
        if d is None or d.type != "field_identifier":
            return None
        out.append((_text(d), c))
    return out or None


def base_names(node: ts.Node) -> tuple[str, ...] | None:
    """The base classes ``struct D : public B`` names (None: one is not a plain name)."""
    out: list[str] = []
    for c in node.children:
        if c.type != "base_class_clause":
            continue
        for b in c.named_children:
            if b.type == "access_specifier" or b.kind_id in COMMENT_IDS:
                continue
            if b.type != "type_identifier":
                return None
            out.append(_text(b))
    return tuple(out)


def has_data_members(node: ts.Node) -> bool:
    """Whether a struct's body declares a data member (or a base class, which may)."""
    if any(c.type == "base_class_clause" for c in node.children):
        return True
    body = node.child_by_field_id(F.body)
    for f in body.named_children if body is not None else ():
        if f.type != "field_declaration" or _is_enum_declaration(f):
            continue
        decls = [c for i, c in enumerate(f.children) if f.field_name_for_child(i) == "declarator"]
        if any(d.type != "function_declarator" for d in decls):
            return True
        t = f.child_by_field_id(F.type)
        if not decls and t is not None and t.child_by_field_id(F.body) is not None:
            return t.type != "enum_specifier"  # an anonymous struct or union member
    return False


def _is_enum_declaration(f: ts.Node) -> bool:
    t = f.child_by_field_id(F.type)
    return (
        t is not None and t.type == "enum_specifier" and f.child_by_field_id(F.declarator) is None
    )


def aggregate_def(node: ts.Node, alias: str | None = None) -> AggregateDef | None:
    """The aggregate struct ``node`` defines (named ``alias`` when it has no tag), else None:
    plain data members only (scalars, pointers, vectors and other structs)."""
    if node.type not in _STRUCT_KINDS:
        return None
    body = node.child_by_field_id(F.body)
    tag = node.child_by_field_id(F.name)
    name = (_text(tag) if tag is not None else "") or (alias or "")
    if body is None or not name or "<" in name:
        return None
    bases = base_names(node)
    if bases is None:
        return None
    members: list[tuple[str, ts.Node, tuple[ts.Node, ...], ts.Node]] = []
    methods: list[tuple[str, ts.Node]] = []
    nested: list[AggregateDef] = []
    has_ctor = empty_default = False
    defaults: dict[str, ts.Node] = {}
    for f in body.named_children:
        if f.type in _SKIPPED or f.kind_id in COMMENT_IDS:
            continue
        if f.type == "function_definition":  # a member function (see .methods)
            from cuda2nki.frontend.methods import method_name

            mname = method_name(f)
            if mname is None or any(
                c.type == "virtual"
                or (c.type == "storage_class_specifier" and _text(c) == "static")
                for c in f.children
            ):
                return None  # a virtual one puts a table pointer first; a static one: no object
            if mname == name:
                has_ctor = True
                empty_default = empty_default or is_empty_default(f)
            elif not mname.startswith("~"):
                methods.append((mname, f))
            continue
        if f.type != "field_declaration":
            return None
        if _is_enum_declaration(f):  # `enum CallPut { Call, Put };`: constants, no member
            continue
        if any(c.type == "storage_class_specifier" for c in f.children):
            return None
        t_node = f.child_by_field_id(F.type)
        if _is_anonymous_member(f, t_node):  # `struct { short lo, hi; };` inside a union
            anon = f"{ANON}{len(members)}"
            inner = aggregate_def(t_node, f"{name}::{anon}")  # type: ignore[arg-type]
            if inner is None:
                return None
            nested.append(inner)
            members.append((anon, t_node, (), t_node))  # type: ignore[arg-type]
            continue
        names = _member_names(f, defaults)
        if names is None or t_node is None or t_node.child_by_field_id(F.body) is not None:
            return None
        quals = tuple(c for c in f.children if c.type == "type_qualifier")
        members.extend((n, t_node, quals, d) for n, d in names)
    if not members or len({m[0] for m in members}) != len(members):
        return None
    if len({m for m, _ in methods}) != len(methods):  # overloaded member functions
        return None
    union = node.type == "union_specifier"
    if defaults and union:
        return None
    held = (name, tuple(members), tuple(methods), has_ctor, bases, union, tuple(nested))
    return AggregateDef(*held, tuple(defaults.items()), empty_default)


def _is_anonymous_member(f: ts.Node, t_node: ts.Node | None) -> bool:
    return (
        t_node is not None
        and t_node.type in _STRUCT_KINDS
        and t_node.child_by_field_id(F.name) is None
        and t_node.child_by_field_id(F.body) is not None
        and f.child_by_field_id(F.declarator) is None
    )


class AggregateLowering(BitFieldLowering):
    """Scalar replacement of aggregate structs: a mixin of
    :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    #: set while lowering a kernel (``__global__``): see :func:`decay_array_members`
    kernel: bool = False

    #: set while lowering an expression that may denote a whole struct value
    agg_ok: bool = False
    #: the member addresses a struct-returning call about to be lowered receives
    agg_out: list[A.Expr] | None = None

    def aggregate_type(self, name: str, node: ts.Node) -> AggregateType | None:
        """The :class:`AggregateType` of the aggregate struct ``name``, else None."""
        got = self.u.aggregate_types.get(name)
        if got is not None:
            return got
        d = self.u.aggregates.get(name)
        if d is None:
            return None
        if name in self.u.aggregates_busy:  # a struct holding itself (through no pointer)
            raise self.fail("C2N1025", node, what=f"struct '{name}' (it holds itself)")
        self.u.aggregates_busy.add(name)
        try:
            fields = tuple(
                (
                    m,
                    self._anon_type(f"{d.name}::{m}", t)
                    if dn is t
                    else self._member_type(t, q, dn),
                )
                for m, t, q, dn in d.members
            )
        finally:
            self.u.aggregates_busy.discard(name)
        got = AggregateType(name=d.name, fields=fields, union=d.union)
        if any(_points_to_self(t) for _, t in fields):  # `struct Node { Node* next; }`
            blob = self.blob_of(got, node)
            fields = tuple((m, _tie(t, blob)) for m, t in fields)
            got = AggregateType(name=d.name, fields=fields, union=d.union)
            self.u.blobs[got.name] = got
        self.u.aggregate_types[name] = got
        return got

    def _anon_type(self, name: str, node: ts.Node) -> object:
        """An anonymous struct or union member (registered as ``Outer::__anonN``)."""
        got = self.aggregate_type(name, node)
        if got is None:
            raise self.fail("C2N1025", node, what=f"struct '{name}'")
        return self.blob_of(got, node) if got.in_bytes else got

    def bit_field_type(self, t: ts.Node, quals: tuple[ts.Node, ...], d: ts.Node) -> BitField:
        """``unsigned kind : 3``: an integer type and a constant width within it."""
        ty = self.type_of(t, quals)
        width_node = d.named_children[-1] if d.named_children else None
        width = self.const_int_node(width_node) if width_node is not None else None
        if (
            not isinstance(ty, A.ScalarType)
            or ty.name in ("float16", "bfloat16", "float32", "float64")
            or width is None
            or not 0 <= width <= ty.bits
        ):
            raise self.fail("C2N1025", d, what=f"bit-field '{_text(d.parent)}'")
        return BitField(base=N.ScalarType(name=ty.name), width=width)

    def _member_type(self, t: ts.Node, quals: tuple[ts.Node, ...], d: ts.Node) -> object:
        if d.type == "bitfield_clause":
            return self.bit_field_type(t, quals, d)
        tname = _text(t).replace("struct ", "").strip()
        if d.type == "pointer_declarator" and tname in self.u.aggregates_busy:
            ty: object = A.OpaqueType(name=SELF)  # a pointer to the struct being defined
        else:
            ty = self.type_of(t, quals)
        dims: list[int] = []
        while d.type in ("pointer_declarator", "array_declarator"):
            if d.type == "pointer_declarator":
                pq = [_text(c) for c in d.children if c.type == "type_qualifier"]
                ty = N.PointerType(pointee=ty, const="const" in pq)  # type: ignore[arg-type]
            else:
                size = d.child_by_field_id(F.size)
                n = self.const_int_node(size) if size is not None else None
                if n is None:
                    raise self.fail("C2N1026", d, name=_text(d))
                dims.insert(0, n)
            d = d.child_by_field_id(F.declarator)
        if dims:
            ty = N.ArrayType(elem=ty, dims=tuple(dims))  # type: ignore[arg-type]
        return ty if isinstance(ty, AggregateType) else self.memory_type(ty, d)

    def memory_type(self, ty: object, node: ts.Node) -> A.CType:
        """``ty`` with each struct reached through a pointer or held in an array replaced by
        its bytes (:meth:`blob_of`)."""
        if isinstance(ty, A.PointerType):
            inner = ty.pointee
            new = self.blob_of(inner, node) if isinstance(inner, AggregateType) else None
            if new is None and isinstance(inner, A.PointerType | A.ArrayType):
                new = self.memory_type(inner, node)
            return (
                ty
                if new is None or new is inner
                else N.PointerType(pointee=new, const=ty.const, restrict=ty.restrict)
            )
        if isinstance(ty, A.ArrayType) and isinstance(ty.elem, AggregateType):
            return N.ArrayType(elem=self.blob_of(ty.elem, node), dims=ty.dims)
        return ty  # type: ignore[return-value]

    def held_type(self, ty: AggregateType, node: ts.Node) -> object:
        """The type a variable of struct ``ty`` has: the struct (replaced by its members), or
        its bytes for a union or a struct with bit-fields."""
        return self.blob_of(ty, node) if ty.in_bytes else ty

    def blob_of(self, ty: AggregateType, node: ts.Node) -> A.VectorType:
        """A struct in memory: a vector of its bytes (``uint8``, its size and alignment), its
        members read at their C layout's byte offsets (:meth:`mem_member`)."""
        got = layout(ty)
        if got is None:
            raise self.fail("C2N1025", node, what=f"struct '{ty.name}' (its layout)")
        _offs, size, align = got
        self.u.blobs[ty.name] = AggregateType(name=ty.name, fields=ty.fields, union=ty.union)
        return N.VectorType(
            name=ty.name, base=N.ScalarType(name="uint8"), width=size, align=align, const=ty.const
        )

    def blob_struct(self, t: object) -> AggregateType | None:
        """The struct whose bytes ``t`` is (see :meth:`blob_of`), else None."""
        if type(t) is A.VectorType and t.base.name == "uint8":
            return self.u.blobs.get(t.name)
        return None

    def mem_member(self, node: ts.Node, ptr: A.Expr, agg: AggregateType, field: str) -> A.Expr:
        """``p->member`` of a struct in memory (``ptr`` points to its bytes): the member's
        value read through a pointer at the member's offset; an array member is a pointer to
        its first element."""
        path = self.path_of(agg, field)
        if path is not None and len(path) > 1:  # through an anonymous member
            inner = self.mem_member(node, ptr, agg, path[0])
            sub = self.blob_struct(inner.ty) or inner.ty
            assert isinstance(sub, AggregateType)
            return self.mem_member(node, address_of(inner), sub, field)
        got = layout(agg)
        mty = dict(agg.fields).get(field)
        if got is None or mty is None or path is None:
            raise self.fail("C2N1030", node, what=f"member '{field}' of struct '{agg.name}'")
        loc = (node.byte_range, self.placer)
        const = bool(getattr(getattr(ptr.ty, "pointee", None), "const", False))
        u8 = N.PointerType(pointee=N.ScalarType(name="uint8", const=const))
        addr: A.Expr = N.Cast(loc=loc, to=u8, operand=ptr, kind="reinterpret", ty=u8)
        off = got[0][field]
        if off:
            lit = N.IntLit(loc=loc, value=off, ty=N.ScalarType(name="int64"))
            addr = N.Binary(loc=loc, op="+", left=addr, right=lit, ty=u8)
        if isinstance(mty, A.ArrayType):  # decays to a pointer to its first element
            elem = mty.elem if len(mty.dims) == 1 else N.ArrayType(elem=mty.elem, dims=mty.dims[1:])
            pt = N.PointerType(pointee=_with_const(elem, const))
            return N.Cast(loc=loc, to=pt, operand=addr, kind="reinterpret", ty=pt)
        if isinstance(mty, BitField):
            return self.bit_read(
                node, self.bit_unit(node, addr, mty, const), mty, bit_shift(agg, field)
            )
        fty = self.blob_of(mty, node) if isinstance(mty, AggregateType) else mty
        fty = _with_const(fty, const)
        pt = N.PointerType(pointee=fty)
        cast = N.Cast(loc=loc, to=pt, operand=addr, kind="reinterpret", ty=pt)
        return N.Unary(loc=loc, op="*", operand=cast, ty=fty)  # type: ignore[arg-type]

    def path_of(self, agg: AggregateType, field: str) -> list[str] | None:
        """``[field]``, or the anonymous members leading to it (see :func:`member_path`)."""
        if field in dict(agg.fields):
            return [field]
        return member_path(agg.fields, field, self._fields_of)

    def _fields_of(self, t: object) -> tuple[tuple[str, object], ...] | None:
        got = self.blob_struct(t) or t
        return got.fields if isinstance(got, AggregateType) else None

    def mem_leaves(self, node: ts.Node, lv: A.Expr, agg: AggregateType) -> list[A.Expr]:
        """The members (leaves, in :func:`flatten`'s order) of the struct in memory ``lv``."""
        ptr = N.Unary(loc=lv.loc, op="&", operand=lv, ty=N.PointerType(pointee=lv.ty))
        out: list[A.Expr] = []
        for member, mty in agg.fields:
            m = self.mem_member(node, ptr, agg, member)
            if isinstance(mty, AggregateType):
                out.extend(self.mem_leaves(node, m, mty))
            elif isinstance(mty, A.ArrayType):
                self.refuse_array_member(node, agg)
            else:
                out.append(m)
        return out

    def refuse_array_member(self, node: ts.Node, agg: AggregateType) -> None:
        raise self.fail(
            "C2N1025", node, what=f"struct '{agg.name}' with an array member, held by value"
        )

    def check_by_value(self, node: ts.Node, ty: AggregateType) -> None:
        """A struct held by value is its members: none may be an array."""
        if any(isinstance(t, A.ArrayType) for _, t in flatten("", ty)):
            self.refuse_array_member(node, ty)

    def agg_member(self, node: ts.Node, base: A.Expr, field: str) -> A.Expr:
        """``s.member`` of a struct variable ``s``: the member's variable."""
        bt = base.ty
        if not isinstance(bt, AggregateType) or not isinstance(base, A.Name):
            raise self.fail(
                "C2N1025", node, what=f"member '{field}' of a struct not held in memory"
            )
        path = self.path_of(bt, field)
        if path is not None and len(path) > 1:  # through an anonymous member
            inner = self.agg_member(node, base, path[0])
            mem = self.blob_struct(inner.ty)
            if mem is not None:
                return self.mem_member(node, address_of(inner), mem, field)
            return self.agg_member(node, inner, field)
        mty = dict(bt.fields).get(field)
        if mty is None or path is None:
            raise self.fail("C2N1030", node, what=f"member '{field}' of struct '{bt.name}'")
        loc = (node.byte_range, self.placer)
        if isinstance(mty, AggregateType) and bt.const:
            mty = AggregateType(
                name=mty.name, fields=mty.fields, const=True, decayed=mty.decayed, union=mty.union
            )
        elif bt.const and getattr(mty, "const", None) is False:
            mty = type(mty)(**{**mty.__dict__, "const": True})  # type: ignore[arg-type]
        return N.Name(loc=loc, name=flat_name(base.name, field), ty=mty)  # type: ignore[arg-type]

    def agg_value(self, node: ts.Node) -> A.Expr:
        """A struct-valued expression (the struct variable it names)."""
        old, self.agg_ok = self.agg_ok, True
        try:
            e = self.expr(node)
        finally:
            self.agg_ok = old
        return e

    def agg_leaves(self, node: ts.Node, e: A.Expr) -> list[A.Expr]:
        """The member variables (leaves) of the struct variable ``e``, in order; of a struct
        in memory (``p[i]``, ``*p``), its members read in place."""
        mem = self.blob_struct(e.ty)
        if mem is not None:
            return self.mem_leaves(node, e, mem)
        if not isinstance(e, A.Name) or not isinstance(e.ty, AggregateType):
            raise self.fail("C2N1025", node, what="struct value other than a variable")
        if e.ty.decayed:  # copied or passed on: the copy of its arrays is not there
            self.refuse_array_member(node, e.ty)
        self.check_by_value(node, e.ty)  # a local holding an array: its members one by one
        return [N.Name(loc=e.loc, name=n, ty=t) for n, t in flatten(e.name, e.ty)]

    def agg_refused_use(self, node: ts.Node, ty: AggregateType) -> None:
        raise self.fail(
            "C2N1025", node, what=f"struct '{ty.name}' used as a value (not through its members)"
        )

    # ------------------------------------------------------------------ statements

    def agg_decl(
        self, decl: ts.Node, name: str, ty: AggregateType, value: ts.Node | None
    ) -> list[A.Stmt]:
        """``S s;`` / ``S s = t;`` / ``S s = {a, b};`` / ``S s = f(...);``"""
        from cuda2nki.frontend.lowerbase import Sym

        if value is not None and (held := self.held_bytes(decl, name, ty, value)) is not None:
            return held  # a struct holding an array, copied from memory: held as its bytes
        if value is not None:  # a local struct holding an array: declared, never copied
            self.check_by_value(decl, ty)
        d = self.u.aggregates.get(ty.name)
        ctor = d is not None and d.has_ctor and not (value is None and d.empty_default)
        if ctor and (value is None or value.type == "argument_list"):
            raise self.fail("C2N1025", decl, what=f"struct '{ty.name}' built by its constructor")
        leaves = flatten(name, ty)
        loc = (decl.byte_range, self.placer)
        decls: list[A.Stmt] = [
            N.VarDecl(loc=loc, name=n, ty=t, init=None, storage="local") for n, t in leaves
        ]
        self.declare(name, Sym(ty))  # type: ignore[arg-type]
        target = N.Name(loc=loc, name=name, ty=ty)  # type: ignore[arg-type]
        if value is None:  # each member its default initialiser, if any
            return decls + default_stores(self, decl, target, ty)  # type: ignore[arg-type]
        return decls + self.agg_store(decl, target, value)

    def held_bytes(
        self, decl: ts.Node, name: str, ty: AggregateType, value: ts.Node
    ) -> list[A.Stmt] | None:
        """``S s = p[i];`` of a struct holding an array, copied from memory: ``s`` holds the
        struct's bytes (as ``auto s = p[i];`` does); None for any other initialiser."""
        from cuda2nki.frontend.lowerbase import Sym

        if not any(isinstance(t, A.ArrayType) for _, t in flatten("", ty)) or ty.in_bytes:
            return None
        blob = self.blob_of(ty, decl)
        init = self.agg_value(value)
        if self.blob_struct(init.ty) is None or init.ty.name != blob.name:  # type: ignore[union-attr]
            return None
        blob = type(blob)(**{**blob.__dict__, "const": False})
        self.declare(name, Sym(blob))
        loc = (decl.byte_range, self.placer)
        return [N.VarDecl(loc=loc, name=name, ty=blob, init=init, storage="local")]

    def agg_store(self, node: ts.Node, target: A.Name, value: ts.Node) -> list[A.Stmt]:
        """The statements that store the struct value ``value`` into the variable ``target``."""
        ty = target.ty
        assert isinstance(ty, AggregateType)
        leaves = self.agg_leaves(node, target)
        loc = (node.byte_range, self.placer)
        if value.type == "initializer_list":  # member by member, in order; the rest zero
            items = [c for c in value.named_children if c.kind_id not in COMMENT_IDS]
            if len(items) > len(ty.fields):
                raise self.fail("C2N1030", value, what=f"initializer of struct '{ty.name}'")
            out: list[A.Stmt] = []
            for (member, mty), item in zip(ty.fields, items):
                t = self.agg_member(item, target, member)
                if isinstance(mty, AggregateType):
                    out.extend(self.agg_store(item, t, item))  # type: ignore[arg-type]
                elif item.type == "initializer_list":
                    out.append(_assign(loc, t, self._init_list(item, mty)))  # type: ignore[arg-type]
                else:
                    out.append(_assign(loc, t, self.expr(item)))
            zero = N.IntLit(loc=loc, value=0, ty=A.ScalarType(name="int32"))
            for member, mty in ty.fields[len(items) :]:
                if default_of(self, ty, member) is not None:  # its default initialiser
                    out.extend(member_default(self, value, target, ty, member, mty))  # type: ignore[arg-type]
                    continue
                t = self.agg_member(value, target, member)
                rest = self.agg_leaves(value, t) if isinstance(mty, AggregateType) else [t]
                out.extend(_assign(loc, leaf, _zero_of(leaf, zero)) for leaf in rest)
            return out
        if value.type in ("call_expression", "binary_expression"):
            outs = [
                N.Unary(loc=loc, op="&", operand=t, ty=N.PointerType(pointee=t.ty))  # type: ignore[arg-type]
                for t in leaves
            ]
            if value.type == "binary_expression":  # `c + d`: operator+(c, d)
                call = self.aggregate_operator(value, outs)  # type: ignore[arg-type]
                if call is None:
                    raise self.fail("C2N1030", value, what=f"assignment to struct '{ty.name}'")
                return [N.ExprStmt(loc=loc, expr=call)]
            old, self.agg_out = self.agg_out, outs
            try:
                call = self.expr(value)
            finally:
                self.agg_out = old
            if isinstance(call.ty, AggregateType) or call.ty != VOID:
                raise self.fail("C2N1025", value, what=f"struct '{ty.name}' from this call")
            return [N.ExprStmt(loc=loc, expr=call)]
        src = self.agg_value(value)
        mem = self.blob_struct(src.ty)
        if mem is not None and mem.name == ty.name:  # `S s = p[i];`: read in place
            return [_assign(loc, t, v) for t, v in zip(leaves, self.mem_leaves(value, src, mem))]
        if not isinstance(src.ty, AggregateType) or src.ty.name != ty.name:
            raise self.fail("C2N1030", value, what=f"assignment to struct '{ty.name}'")
        return [_assign(loc, t, v) for t, v in zip(leaves, self.agg_leaves(value, src))]

    def agg_return(self, node: ts.Node, value: ts.Node | None) -> list[A.Stmt]:
        """``return s;`` in a struct-returning function: store through the out-pointers."""
        ty = self.return_type
        assert isinstance(ty, AggregateType)
        if value is None:
            raise self.fail("C2N1030", node, what=f"return without a '{ty.name}'")
        loc = (node.byte_range, self.placer)
        tmp = N.Name(loc=loc, name=f"{RET}__tmp", ty=ty)  # type: ignore[arg-type]
        out: list[A.Stmt] = []
        if value.type == "identifier":
            src = self.agg_value(value)
            vals = self.agg_leaves(value, src)
        else:  # `return {a, b};`, `return f(x);`: through a temporary
            out = self.agg_decl(node, tmp.name, ty, value)
            vals = self.agg_leaves(node, tmp)
        for (pname, pty), v in zip(flatten(RET, ty), vals):
            ptr = N.Name(loc=loc, name=pname, ty=N.PointerType(pointee=pty))
            deref = N.Unary(loc=loc, op="*", operand=ptr, ty=pty)
            out.append(_assign(loc, deref, v))
        out.append(N.Return(loc=loc, value=None))
        return out


def _size_align(t: object) -> tuple[int, int] | None:
    """C size and alignment of a member type (None: unknown)."""
    if isinstance(t, A.ScalarType):
        n = max(1, t.bits // 8)
        return n, n
    if isinstance(t, A.PointerType):
        return 8, 8
    if isinstance(t, A.VectorType):
        n = max(1, t.base.bits // 8) * t.width
        al = t.align or (min(n, 16) if n & (n - 1) == 0 else max(1, t.base.bits // 8))
        return n, al
    if isinstance(t, A.ArrayType):
        got = _size_align(t.elem)
        if got is None or any(d is None for d in t.dims):
            return None
        n = got[0]
        for d in t.dims:
            n *= d  # type: ignore[operator]
        return n, got[1]
    if isinstance(t, AggregateType):
        lay = layout(t)
        return None if lay is None else (lay[1], lay[2])
    return None


def align_of(t: object) -> int | None:
    """``alignof(t)``: the C alignment of a type (None: unknown)."""
    got = _size_align(t)
    return None if got is None else got[1]


def layout(ty: AggregateType) -> tuple[dict[str, int], int, int] | None:
    """The C layout of a struct: member byte offsets, size (padded to its alignment) and
    alignment (of a union, or with bit-fields: see :mod:`cuda2nki.frontend.unions`)."""
    got = c_layout(ty.fields, ty.union, _size_align)
    return None if got is None else (got.offsets, got.size, got.align)


def bit_shift(ty: AggregateType, field: str) -> int:
    """The lowest bit of bit-field ``field`` within its storage unit."""
    got = c_layout(ty.fields, ty.union, _size_align)
    return got.shifts[field] if got is not None else 0


def _points_to_self(t: object) -> bool:
    while isinstance(t, A.PointerType):
        t = t.pointee
    return isinstance(t, A.OpaqueType) and t.name == SELF


def _tie(t: object, blob: A.VectorType) -> object:
    """``t`` with the placeholder for its own struct replaced by the struct's bytes."""
    if isinstance(t, A.PointerType):
        return N.PointerType(pointee=_tie(t.pointee, blob), const=t.const)  # type: ignore[arg-type]
    if isinstance(t, A.OpaqueType) and t.name == SELF:
        return blob
    return t


def _with_const(t: object, const: bool) -> object:
    if not const or isinstance(t, A.ArrayType) or not hasattr(t, "const"):
        return t
    return type(t)(**{**t.__dict__, "const": True})


def decay_array_members(ty: AggregateType) -> AggregateType:
    """A kernel parameter ``param_t p`` whose struct holds an array (``int param[1024];``,
    often ``__grid_constant__``): each array member, nested ones too, becomes a pointer to
    its first element, so ``p.param[i]`` reads the launch's copy of the array as a buffer
    (the kernel receives it as an input tensor)."""
    fields: list[tuple[str, object]] = []
    changed = False
    for member, mty in ty.fields:
        new = mty
        if isinstance(mty, AggregateType):
            new = decay_array_members(mty)
        elif isinstance(mty, A.ArrayType) and all(d is not None for d in mty.dims):
            elem = mty.elem if len(mty.dims) == 1 else N.ArrayType(elem=mty.elem, dims=mty.dims[1:])
            new = N.PointerType(pointee=_with_const(elem, ty.const))  # type: ignore[arg-type]
        changed = changed or new is not mty
        fields.append((member, new))
    if not changed:
        return ty
    return AggregateType(name=ty.name, fields=tuple(fields), const=ty.const, decayed=True)


def out_params(ty: AggregateType) -> list[tuple[str, A.CType]]:
    """The out-pointer parameters a function returning ``ty`` takes instead."""
    return [(n, N.PointerType(pointee=t)) for n, t in flatten(RET, ty)]


def _zero_of(leaf: A.Expr, zero: A.Expr) -> A.Expr:
    """The zero a member left out of a brace initializer gets (a vector: all lanes zero)."""
    if isinstance(leaf.ty, A.VectorType):
        from cuda2nki.frontend.lower import _vector_ctor

        return _vector_ctor(leaf.ty, (zero,) * leaf.ty.width, zero.loc)
    return zero


def _assign(loc: object, target: A.Expr, value: A.Expr) -> A.Stmt:
    from cuda2nki.frontend.typesys import unqualified

    a = N.Assign(loc=loc, op="=", target=target, value=value, ty=unqualified(target.ty))
    return N.ExprStmt(loc=loc, expr=a)
