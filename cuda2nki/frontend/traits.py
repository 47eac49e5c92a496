"""Member typedefs of structs, as type traits: ``typename vec4<T>::Type``.

Templated code picks a type per template argument through a class template whose explicit
specialisations each name it::

    template <typename T> struct vec4 { typedef float Type; };   // the primary template
    template <> struct vec4<float> { typedef float4 Type; };
    template <> struct vec4<double> { typedef double4 Type; };

    template <typename T> __global__ void integrate(typename vec4<T>::Type* pos, ...);

:func:`trait_struct` remembers each such struct (primary, explicit specialisation, or a plain
struct: ``Config::value_type``) with its member typedefs; :meth:`TraitLowering.trait_type`
resolves ``S<args>::member``: the explicit specialisation whose arguments are the same types,
else the primary template with its parameters bound to the arguments.  Inside a template
not yet instantiated (an argument is still a template parameter) the type stays opaque.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import _Placeholder, _text
from cuda2nki.frontend.typesys import unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

_STRUCTS = ("struct_specifier", "class_specifier")
_TYPEDEFS = ("type_definition", "alias_declaration")


@dataclass(frozen=True)
class TraitStruct:
    """A struct with member typedefs: its name, its template parameters (primary template),
    its explicit specialisation's argument nodes (None: not a specialisation), and per member
    typedef the declaring node."""

    name: str
    tparams: tuple[str, ...]
    args: tuple[ts.Node, ...] | None
    typedefs: tuple[tuple[str, ts.Node], ...]


def _kids(node: ts.Node | None) -> list[ts.Node]:
    if node is None:
        return []
    return [c for c in node.named_children if c.kind_id not in COMMENT_IDS]


def _typedef_names(node: ts.Node) -> list[str]:
    if node.type == "alias_declaration":
        name = node.child_by_field_id(F.name)
        return [_text(name)] if name is not None else []
    out = []
    for i, c in enumerate(node.children):
        if node.field_name_for_child(i) != "declarator":
            continue
        while c is not None and c.type == "pointer_declarator":
            c = c.child_by_field_id(F.declarator)
        if c is not None and c.type == "type_identifier":
            out.append(_text(c))
    return out


def trait_struct(node: ts.Node, tparams: ts.Node | None) -> TraitStruct | None:
    """The struct ``node`` defines (inside ``template <tparams>``) when it has member typedefs,
    else None."""
    if node.type not in _STRUCTS:
        return None
    body = node.child_by_field_id(F.body)
    name_node = node.child_by_field_id(F.name)
    if body is None or name_node is None:
        return None
    typedefs = [(n, c) for c in _kids(body) if c.type in _TYPEDEFS for n in _typedef_names(c)]
    if not typedefs:
        return None
    args: tuple[ts.Node, ...] | None = None
    if name_node.type == "template_type":
        args = tuple(_kids(name_node.child_by_field_id(F.arguments)))
        name = _text(name_node.child_by_field_id(F.name))
    else:
        name = _text(name_node)
    names: list[str] = []
    for p in _kids(tparams):
        if p.type not in ("type_parameter_declaration", "optional_type_parameter_declaration"):
            return None  # a non-type parameter: not a type trait this module knows
        tn = p.child_by_field_id(F.name) or next(
            (c for c in p.named_children if c.type == "type_identifier"), None
        )
        names.append(_text(tn) if tn is not None else "")
    return TraitStruct(name, tuple(names), args, tuple(typedefs))


class TraitLowering(_Base):
    """``S<args>::member`` types: a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    def trait_type(self, node: ts.Node) -> A.CType | None:
        """The type ``node`` (``S<args>::member``, ``typename S<args>::member``, ``S::member``)
        names, else None when ``S`` is no struct with member typedefs."""
        if node.type == "dependent_type":
            inner = _kids(node)
            if not inner:
                return None
            node = inner[-1]
        if node.type != "qualified_identifier":
            return None
        scope = node.child_by_field_id(F.scope)
        member = node.child_by_field_id(F.name)
        if scope is None or member is None or member.type != "type_identifier":
            return None
        if scope.type == "template_type":
            sname = _text(scope.child_by_field_id(F.name))
            arg_nodes = _kids(scope.child_by_field_id(F.arguments))
        else:
            sname, arg_nodes = _text(scope), []
        cands = self.u.traits.get(sname)
        if not cands:
            return None
        args = [self._trait_arg(a) for a in arg_nodes]
        if any(a is None for a in args):  # a template not instantiated yet
            self.u.dependent_types.add(_text(node))
            return N.OpaqueType(name=_text(node))
        mname = _text(member)
        for ts_ in cands:
            if ts_.args is not None and self._same_args(ts_.args, args):
                return self._trait_member(ts_, mname, {}, node)
        for ts_ in cands:
            if ts_.args is None and len(ts_.tparams) == len(args):
                return self._trait_member(ts_, mname, dict(zip(ts_.tparams, args)), node)
        return None

    def _trait_arg(self, node: ts.Node) -> A.CType | None:
        got = self._template_arg(node)
        if isinstance(got, A.OpaqueType) or not isinstance(
            got, A.ScalarType | A.VectorType | A.PointerType
        ):
            return None
        return unqualified(got)

    def _same_args(self, nodes: tuple[ts.Node, ...], args: list[A.CType | None]) -> bool:
        if len(nodes) != len(args):
            return False
        from cuda2nki.frontend.lower import BodyLowerer

        sub = BodyLowerer(self.u, self.func_name, host=True)
        try:
            return all(sub._trait_arg(n) == a for n, a in zip(nodes, args))
        except _Placeholder:
            return False

    def _trait_member(
        self, ts_: TraitStruct, member: str, env: dict, node: ts.Node
    ) -> A.CType | None:
        decl = dict(ts_.typedefs).get(member)
        if decl is None:
            return None
        from cuda2nki.frontend.lower import BodyLowerer

        sub = BodyLowerer(self.u, self.func_name, env=env)
        if decl.type == "alias_declaration":
            return sub.type_descriptor(decl.child_by_field_id(F.type))
        quals = tuple(c for c in decl.children if c.type == "type_qualifier")
        ty: A.CType = sub.type_of(decl.child_by_field_id(F.type), quals)
        for i, c in enumerate(decl.children):
            if decl.field_name_for_child(i) != "declarator":
                continue
            if member not in _typedef_names_of(c):
                continue
            while c.type == "pointer_declarator":
                ty = N.PointerType(pointee=ty)
                c = c.child_by_field_id(F.declarator)
            return ty
        return ty


def _typedef_names_of(declarator: ts.Node) -> list[str]:
    c: ts.Node | None = declarator
    while c is not None and c.type == "pointer_declarator":
        c = c.child_by_field_id(F.declarator)
    return [_text(c)] if c is not None and c.type == "type_identifier" else []
