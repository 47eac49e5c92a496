"""Static constant members of structs: configuration ("traits") structs.

Kernels take their compile-time sizes from a struct's ``static constexpr`` members, named
directly or through a template parameter the struct is given as::

    struct Small { static constexpr int kThreads = 64; static constexpr int kItems = 2; };
    template <int T, int I> struct Tiles {
        static constexpr int kThreads = T;
        static constexpr int kTile = kThreads * I;     // members may use the earlier ones
    };
    using Big = Tiles<128, 4>;

    template <typename Cfg> __global__ void k(...) { constexpr int n = Cfg::kItems; ... }
    k<Small><<<g, Small::kThreads>>>(...);   k<Big><<<g, Big::kThreads>>>(...);

A struct whose members are only such constants (no data members) is a *traits struct*: as a
type it is an opaque tag (:func:`traits_type`, ``Small`` or ``Tiles<128, 4>``), enough to be a
template argument; ``S::m``, ``Tiles<128, 4>::m`` and ``Cfg::m`` (``Cfg`` bound to such a tag)
are integer or floating constants (:func:`static_member`), each member's initialiser folded
with the struct's template parameters and the earlier members bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import _Placeholder, _text

#: argument node kinds that name types, never integers
_TYPE_KINDS = frozenset({"primitive_type", "sized_type_specifier", "template_type"})

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer
    from cuda2nki.frontend.unit import UnitContext


@dataclass(frozen=True)
class StaticStruct:
    """A struct's static constant members (name, type node, initialiser node, in order), its
    template parameters (names, empty for a plain struct) and whether it has data members."""

    name: str
    params: tuple[str, ...]
    members: tuple[tuple[str, ts.Node, ts.Node], ...]
    has_data: bool


def static_struct(node: ts.Node, tparams: ts.Node | None) -> StaticStruct | None:
    """The static constants of the struct ``node`` (None when it declares none)."""
    name = node.child_by_field_id(F.name)
    body = node.child_by_field_id(F.body)
    if name is None or body is None or name.type != "type_identifier":
        return None
    members: list[tuple[str, ts.Node, ts.Node]] = []
    has_data = False
    for c in body.named_children:
        if c.type != "field_declaration":
            continue
        words = {
            _text(k) for k in c.children if k.type in ("storage_class_specifier", "type_qualifier")
        }
        decl, value, ty = (c.child_by_field_id(f) for f in (F.declarator, F.default_value, F.type))
        if "static" not in words:
            has_data = has_data or (decl is not None and decl.type != "function_declarator")
            continue
        if words & {"const", "constexpr"} and decl is not None and value is not None and ty:
            if decl.type == "field_identifier":
                members.append((_text(decl), ty, value))
    if not members:
        return None
    return StaticStruct(_text(name), _param_names(tparams), tuple(members), has_data)


def _param_names(tparams: ts.Node | None) -> tuple[str, ...]:
    if tparams is None:
        return ()
    out = []
    for p in tparams.named_children:
        if p.kind_id in COMMENT_IDS:
            continue
        d = p.child_by_field_id(F.declarator) or p.child_by_field_id(F.name)
        out.append(_text(d) if d is not None else "")
    return tuple(out)


def traits_type(low: BodyLowerer, name: str, args: tuple[int, ...] | None = None) -> A.CType | None:
    """The opaque tag type of the traits struct ``name`` (``Tiles<128, 4>`` with ``args``),
    None when ``name`` is not one or the arguments do not fit."""
    st = low.u.static_structs.get(name)
    if st is None or st.has_data or (args is None) != (not st.params):
        return None
    if args is not None and len(args) != len(st.params):
        return None
    return N.OpaqueType(name=_canonical(name, args))


def template_tag(low: BodyLowerer, node: ts.Node) -> A.CType | None:
    """``Tiles<128, 4>`` (a ``template_type`` node) as a traits tag, else None."""
    name = _text(node.child_by_field_id(F.name))
    st = low.u.static_structs.get(name)
    if st is None or st.has_data or not st.params:
        return None
    args = _arg_values(low, node.child_by_field_id(F.arguments))
    return traits_type(low, name, args) if args is not None else None


def _arg_values(low: BodyLowerer, node: ts.Node | None) -> tuple[int, ...] | None:
    """The integer template arguments of ``node``; None (and no diagnostic) when one is not an
    integer constant."""
    if node is None:
        return None
    out = []
    mark = len(low.diags)
    for c in node.named_children:
        if c.kind_id in COMMENT_IDS:
            continue
        target = c.child_by_field_id(F.type) if c.type == "type_descriptor" else c
        v = None
        if target is not None and target.type not in _TYPE_KINDS:
            v = low.const_int_node(target)
        if v is None:
            del low.diags[mark:]  # a type argument, or a value known only later
            return None
        out.append(v)
    return tuple(out)


def _canonical(name: str, args: tuple[int, ...] | None) -> str:
    return name if args is None else f"{name}<{', '.join(map(str, args))}>"


def static_member(low: BodyLowerer, node: ts.Node) -> tuple[int | float, A.CType] | None:
    """The value and type of ``scope::member`` (a ``qualified_identifier`` node), ``scope`` a
    traits struct, an instance of one (``Tiles<128, 4>``), a typedef of either or a template
    parameter bound to one; else None."""
    scope, name = node.child_by_field_id(F.scope), node.child_by_field_id(F.name)
    if scope is None or name is None or name.type not in ("identifier", "type_identifier"):
        return None
    if scope.type == "template_type":
        tag = template_tag(low, scope)
        text = tag.name if isinstance(tag, A.OpaqueType) else None
    else:
        text = _tag_of(low, _text(scope).replace(" ", ""))
    if text is None:
        return None
    struct, _, rest = text.partition("<")
    st = low.u.static_structs.get(struct)
    if st is None:
        return None
    args = tuple(int(p) for p in rest.rstrip(">").split(",")) if rest else ()
    return _member_values(low.u, st, args).get(_text(name))


def _tag_of(low: BodyLowerer, scope: str) -> str | None:
    bound = low.env.get(scope)
    if isinstance(bound, A.OpaqueType):
        return bound.name
    alias = low.u.typedefs.get(scope)
    if isinstance(alias, A.OpaqueType):
        return alias.name
    return scope if scope in low.u.static_structs else None


def _member_values(
    unit: UnitContext, st: StaticStruct, args: tuple[int, ...]
) -> dict[str, tuple[int | float, A.CType]]:
    """Every member of ``st`` under the template arguments ``args`` (memoised per unit)."""
    from cuda2nki.frontend.lower import BodyLowerer

    key = (st.name, args)
    memo = unit.static_values
    if key in memo:
        return memo[key]
    memo[key] = {}  # a member defined through itself finds nothing
    env: dict = dict(zip(st.params, args, strict=False))
    out: dict[str, tuple[int | float, A.CType]] = {}
    for member, ty_node, value in st.members:
        low = BodyLowerer(unit, "<file>", dict(env), host=True)
        try:
            ty = low.type_of(ty_node)
            v = low.const_value(low.expr(value))
        except _Placeholder:
            continue
        if isinstance(v, bool):
            v = int(v)
        if isinstance(v, int) and isinstance(ty, A.ScalarType):
            out[member] = (v, ty)
            env[member] = v  # the later members see it by its plain name
        elif isinstance(v, float) and isinstance(ty, A.ScalarType):
            out[member] = (v, ty)
    memo[key] = out
    return out


__all__ = ["StaticStruct", "static_member", "static_struct", "template_tag", "traits_type"]
