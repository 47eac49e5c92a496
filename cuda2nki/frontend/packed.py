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
    #: a one-argument constructor copying a machine word (``int4``) into the array (memcpy)
    word_ctor: bool = False
    #: methods returning the array's bits as a machine word (``int4 get_bits() const``)
    getters: tuple[str, ...] = ()
    #: static methods returning every lane set to their one parameter (``constant(T value)``)
    fills: tuple[str, ...] = ()
    #: static methods without parameters returning a fill of a constant (``zeros()`` is
    #: ``{ return constant(0.f); }``): name -> the constant's expression node
    filled: tuple[tuple[str, ts.Node], ...] = ()


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


_ASSERT = re.compile(r"static_assert\s*\([^;]*\)\s*;")


def _body_text(fn: ts.Node) -> str:
    """The function's body with ``static_assert``s dropped and whitespace collapsed."""
    body = fn.child_by_field_id(F.body)
    text = _ASSERT.sub("", _text(body)) if body is not None else ""
    return re.sub(r"\s+", " ", text).strip()


def _word_ctor(fn: ts.Node, struct: str, member: str) -> bool:
    """``explicit Packed128(int4 bits) { memcpy(&payload, &bits, sizeof(bits)); }``."""
    decl = fn.child_by_field_id(F.declarator)
    if decl is None or decl.type != "function_declarator":
        return False
    name, params = decl.child_by_field_id(F.declarator), decl.child_by_field_id(F.parameters)
    if name is None or _text(name) != struct or params is None:
        return False
    plist = [p for p in params.named_children if p.type == "parameter_declaration"]
    pdecl = plist[0].child_by_field_id(F.declarator) if len(plist) == 1 else None
    if pdecl is None or pdecl.type != "identifier":
        return False
    p, m = re.escape(_text(pdecl)), re.escape(member)
    pat = rf"\{{ ?memcpy ?\( ?&? ?(?:this ?-> ?)?{m} ?, ?& ?{p} ?, ?sizeof ?\([^)]*\) ?\) ?; ?\}}"
    return re.fullmatch(pat, _body_text(fn)) is not None


def _getter(fn: ts.Node, member: str) -> str | None:
    """``int4 get_bits() const { int4 bits; memcpy(&bits, &payload, sizeof(bits)); return bits; }``:
    the method's name."""
    decl = fn.child_by_field_id(F.declarator)
    if decl is None or decl.type != "function_declarator":
        return None
    name, params = decl.child_by_field_id(F.declarator), decl.child_by_field_id(F.parameters)
    if name is None or name.type != "field_identifier" or params is None:
        return None
    if any(p.type == "parameter_declaration" for p in params.named_children):
        return None
    m = re.escape(member)
    pat = (
        rf"\{{ ?\w+ (\w+) ?; ?memcpy ?\( ?& ?\1 ?, ?&? ?(?:this ?-> ?)?{m} ?, ?"
        rf"sizeof ?\([^)]*\) ?\) ?; ?return \1 ?; ?\}}"
    )
    return _text(name) if re.fullmatch(pat, _body_text(fn)) else None


def _is_static(fn: ts.Node) -> bool:
    return any(c.type == "storage_class_specifier" and _text(c) == "static" for c in fn.children)


def _params_of(fn: ts.Node) -> tuple[str, list[ts.Node]] | None:
    """A method's name and parameter declarations."""
    decl = fn.child_by_field_id(F.declarator)
    if decl is None or decl.type != "function_declarator":
        return None
    name, params = decl.child_by_field_id(F.declarator), decl.child_by_field_id(F.parameters)
    if name is None or params is None:
        return None
    return _text(name), [p for p in params.named_children if p.type == "parameter_declaration"]


def _fill(fn: ts.Node, struct: str, member: str) -> str | None:
    """``static S constant(T v) { S r; for (int k = 0; k < size; ++k) { r.payload[k] = v; }
    return r; }``: the method's name (any names, ``k++`` or ``++k``, braces optional)."""
    got = _params_of(fn)
    if not _is_static(fn) or got is None or len(got[1]) != 1:
        return None
    pdecl = got[1][0].child_by_field_id(F.declarator)
    if pdecl is None or pdecl.type != "identifier":
        return None
    p, m = re.escape(_text(pdecl)), re.escape(member)
    pat = (
        rf"\{{ ?(?:{re.escape(struct)}(?:<\w+>)?) (\w+) ?; ?for ?\( ?(?:int|size_t|unsigned) (\w+) ?= ?0 ?; "
        rf"?\2 ?< ?\w+ ?; ?(?:\+\+ ?\2|\2 ?\+\+) ?\) ?\{{? ?\1 ?\. ?{m} ?\[ ?\2 ?\] ?= ?{p} ?; ?\}}? ?"
        rf"return \1 ?; ?\}}"
    )
    return got[0] if re.fullmatch(pat, _body_text(fn)) else None


def _filled(fn: ts.Node, fills: tuple[str, ...]) -> tuple[str, ts.Node] | None:
    """``static S zeros() { return constant(0.f); }``: its name and the constant's node."""
    got = _params_of(fn)
    body = fn.child_by_field_id(F.body)
    if not _is_static(fn) or got is None or got[1] or body is None:
        return None
    stmts = [c for c in body.named_children if c.type != "comment"]
    if len(stmts) != 1 or stmts[0].type != "return_statement":
        return None
    call = next((c for c in stmts[0].named_children if c.type == "call_expression"), None)
    if call is None or _text(call.child_by_field_id(F.function)) not in fills:
        return None
    args = [a for a in call.child_by_field_id(F.arguments).named_children if a.type != "comment"]
    if len(args) != 1 or args[0].type not in ("number_literal", "unary_expression"):
        return None
    return got[0], args[0]


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
    methods = [f for f in body.named_children if f.type == "function_definition"]
    struct = _text(name_node)
    ctor = any(_word_ctor(f, struct, member) for f in methods)
    getters = tuple(g for f in methods if (g := _getter(f, member)) is not None)
    fills = tuple(g for f in methods if (g := _fill(f, struct, member)) is not None)
    filled = tuple(g for f in methods if (g := _filled(f, fills)) is not None)
    return PackedStruct(
        struct, tparam, member, elem, dim, tuple(statics), ctor, getters, fills, filled
    )
