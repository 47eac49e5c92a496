"""Packed vector structs: ``template <class T> struct alignas(16) Packed128 { T payload[N]; ... }``.

A struct (templated over its element type or not) whose only data member is a fixed-size array,
whose ``operator[]`` (if any) reads that array at its argument, and whose other members are
``static constexpr`` integers and member functions, is a short vector: the front end types its
values as a :class:`~cuda2nki.frontend.ast.VectorType` of ``N`` lanes, ``v[k]`` and
``v.payload[k]`` as lane ``k``, and ``Packed128<T>::size`` / ``x128::size`` as constants.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from cuda2nki.frontend.cst import F

_STRUCT_KINDS = ("struct_specifier", "class_specifier")


@dataclass(frozen=True)
class PackedStruct:
    """A packed vector struct: ``member`` is its array, ``dim`` the array size expression,
    ``statics`` its ``static constexpr`` members in declaration order."""

    name: str
    tparam: str | None
    member: str
    elem: ts.Node
    dim: ts.Node
    statics: tuple[tuple[str, ts.Node, ts.Node], ...]  # name, type, value


@dataclass(frozen=True)
class PackedInstance:
    """One element type's instance: lane count and the values of the static members."""

    struct: PackedStruct
    width: int
    statics: tuple[tuple[str, int, object], ...]  # name, value, C type

    def static(self, name: str) -> tuple[int, object] | None:
        return next(((v, t) for n, v, t in self.statics if n == name), None)


def _text(node: ts.Node) -> str:
    return node.text.decode() if node.text is not None else ""


def _type_param(tparams: ts.Node | None) -> str | None | bool:
    """The single ``typename``/``class`` parameter's name; None: not a template; False: other."""
    if tparams is None:
        return None
    params = [p for p in tparams.named_children if p.type != "comment"]
    if len(params) != 1 or params[0].type != "type_parameter_declaration":
        return False
    names = [c for c in params[0].named_children if c.type == "type_identifier"]
    return _text(names[0]) if len(names) == 1 else False


def _reads_member(fn: ts.Node, member: str) -> bool:
    """``operator[](int i) { return member[i]; }`` (any parameter name, any spacing)."""
    decl = fn.child_by_field_id(F.declarator)
    body = fn.child_by_field_id(F.body)
    if decl is None or body is None:
        return False
    m = re.search(r"\(\s*(?:const\s+)?[\w\s]+?\b(\w+)\s*\)", _text(decl))
    if m is None:
        return False
    flat = re.sub(r"\s+", "", _text(body))
    return flat in (
        f"{{return{member}[{m.group(1)}];}}",
        f"{{returnthis->{member}[{m.group(1)}];}}",
    )


def packed_struct(node: ts.Node, tparams: ts.Node | None) -> PackedStruct | None:
    """The packed vector struct ``node`` defines, else None (an ordinary struct)."""
    if node.type not in _STRUCT_KINDS:
        return None
    name_node, body = node.child_by_field_id(F.name), node.child_by_field_id(F.body)
    tparam = _type_param(tparams)
    if name_node is None or body is None or tparam is False:
        return None
    arrays: list[tuple[str, ts.Node, ts.Node]] = []
    statics: list[tuple[str, ts.Node, ts.Node]] = []
    indexers: list[ts.Node] = []
    for f in body.named_children:
        if f.type == "field_declaration":
            decl, value = f.child_by_field_id(F.declarator), f.child_by_field_name("default_value")
            static = any(
                _text(c) == "static" for c in f.children if c.type == "storage_class_specifier"
            )
            if (
                static
                and value is not None
                and decl is not None
                and decl.type == "field_identifier"
            ):
                statics.append((_text(decl), f.child_by_field_id(F.type), value))
            elif not static and decl is not None and decl.type == "array_declarator":
                inner, size = decl.child_by_field_id(F.declarator), decl.child_by_field_id(F.size)
                if inner is None or size is None or inner.type != "field_identifier":
                    return None
                arrays.append((_text(inner), f.child_by_field_id(F.type), size))
            else:
                return None
        elif f.type in ("function_definition", "declaration", "access_specifier", "comment"):
            if "operator" in _text(f.child_by_field_id(F.declarator) or f).split("(")[0]:
                indexers.append(f)
        elif f.type not in ("template_declaration", "friend_declaration", "type_definition"):
            return None
    if len(arrays) != 1:
        return None
    member, elem, dim = arrays[0]
    for fn in indexers:
        head = _text(fn.child_by_field_id(F.declarator) or fn).split("(")[0].replace(" ", "")
        if not head.endswith("operator[]") or not _reads_member(fn, member):
            return None
    return PackedStruct(_text(name_node), tparam, member, elem, dim, tuple(statics))
