"""C++14 variable templates used as constants: ``kEmpty<int>``, ``kTile<float, 4>``.

A file-scope declaration under a template header defines a family of constants::

    template <typename T> constexpr T kEmpty = static_cast<T>(-1);
    template <typename T, int N> __device__ constexpr T kScale = T(1) / N;

:func:`register` keeps each such declaration by name (its template parameters and its
declaration node).  :func:`instance` gives the value of a use ``kEmpty<K>``: the declaration's
type and initialiser lowered again with the template parameters bound to the use's arguments
(types, or integer constants), so ``kEmpty<unsigned>`` is ``(unsigned)-1`` and
``kScale<float, 4>`` is ``0.25f``, each converted to its declared type as an initialisation
converts; a parameter the use leaves out takes its default.  A use with a parameter left that
has no default, or an argument that is not a constant, is not an instance: None, and the caller
refuses it as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import QUALIFIER_IDS, F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.structtemplates import _PARAM_KINDS
from cuda2nki.frontend.typesys import unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer
    from cuda2nki.frontend.unit import UnitContext


@dataclass(frozen=True)
class VarTemplate:
    """A variable template: its parameters (name, ``int``/``type``) and declaration."""

    params: tuple[tuple[str, str, ts.Node | None], ...]  # name, kind, default
    decl: ts.Node
    declarator: ts.Node


def register(unit: UnitContext, tdecl: ts.Node, namespace: str = "") -> None:
    """Keep the variable template ``tdecl`` declares, if it declares one."""
    decl = next((c for c in tdecl.named_children if c.type == "declaration"), None)
    plist = tdecl.child_by_field_id(F.parameters)
    if decl is None or plist is None:
        return
    params = _params(plist)
    if params is None:
        return
    for d in decl.children_by_field_id(F.declarator):
        if d.type != "init_declarator":
            continue
        name = d.child_by_field_id(F.declarator)
        if name is None or name.type != "identifier":
            continue
        vt = VarTemplate(params=params, decl=decl, declarator=d)
        unit.var_templates[_text(name)] = vt
        if namespace:
            unit.var_templates[f"{namespace}::{_text(name)}"] = vt


def _params(plist: ts.Node) -> tuple[tuple[str, str, ts.Node | None], ...] | None:
    out: list[tuple[str, str, ts.Node | None]] = []
    for p in plist.named_children:
        kind = _PARAM_KINDS.get(p.type)
        if kind is None:
            if p.type == "comment":
                continue
            return None  # a template template parameter, a pack...
        if kind == "int":
            n = p.child_by_field_id(F.declarator)
        else:
            n = p.child_by_field_id(F.name) or next(
                (c for c in p.named_children if c.type == "type_identifier"), None
            )
        if n is None or n.type not in ("identifier", "type_identifier"):
            return None
        default = p.child_by_field_id(F.default_value) or p.child_by_field_id(F.default_type)
        out.append((_text(n), kind, default))
    return tuple(out)


def instance(low: BodyLowerer, node: ts.Node) -> A.Expr | None:
    """The value of the use ``node`` (``name<args>``) of a variable template, else None."""
    inner = node
    while inner is not None and inner.type == "qualified_identifier":  # `cfg::kBias<K>`
        inner = inner.child_by_field_id(F.name)
    args_node = inner.child_by_field_id(F.arguments) if inner is not None else None
    if args_node is None:
        return None
    name = _text(node)[: args_node.start_byte - node.start_byte]
    vt = low.u.var_templates.get(name.replace(" ", "").lstrip(":"))
    args = [a for a in args_node.named_children if a.type != "comment"]
    if vt is None or len(args) > len(vt.params):
        return None
    env = _bound(low, vt, args)
    if env is None:
        return None
    return _lowered(low, vt, env, node)


def _bound(low: BodyLowerer, vt: VarTemplate, args: list[ts.Node]) -> dict | None:
    """The use's environment: each parameter bound to its argument, or to its default
    evaluated with the parameters before it bound."""
    from cuda2nki.frontend.lower import BodyLowerer

    env: dict = dict(low.env)
    for k, (pname, kind, default) in enumerate(vt.params):
        if k < len(args):
            got = low._template_arg(args[k])
        elif default is not None:
            got = BodyLowerer(low.u, low.func_name, env=env, host=low.host)._template_arg(default)
        else:
            return None
        if kind == "type":
            if not isinstance(got, A.CType):
                return None
            env[pname] = got
        else:
            v = low.const_value(got) if isinstance(got, A.Expr) else None
            if not isinstance(v, int) or isinstance(v, bool):
                return None
            env[pname] = v
    return env


def _lowered(low: BodyLowerer, vt: VarTemplate, env: dict, use: ts.Node) -> A.Expr:
    from cuda2nki.frontend.lower import BodyLowerer

    sub = BodyLowerer(low.u, low.func_name, env=env, host=low.host)
    quals = tuple(
        c
        for c in vt.decl.children
        if c.kind_id in QUALIFIER_IDS and _text(c) in ("const", "constexpr")
    )
    base = sub.type_of(vt.decl.child_by_field_id(F.type), quals)
    _, ty = sub._declarator_type(vt.declarator.child_by_field_id(F.declarator), base)
    value = sub._initializer(vt.declarator.child_by_field_id(F.value), ty)
    to = unqualified(ty)
    if unqualified(value.ty) == to:
        return value
    loc = (use.byte_range, low.placer)
    return N.Cast(loc=loc, to=to, operand=value, kind="c", ty=to)
