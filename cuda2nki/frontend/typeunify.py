"""Template type parameters read off written types: a parameter ``const matrix<T>& m`` of a
template host function matched against the type its argument is declared with
(``matrix<float> a;``, or ``const matrix<U>& a`` in a template caller whose ``U`` is known), or
against the parameter written in an explicit instantiation (``template void run(matrix<float>&);``).

The match is syntactic: both type specifiers are walked together, a type parameter takes the
type written at its place (a ``type_descriptor`` or a plain specifier, lowered in the caller's
scope), every other part must be spelled the same (``matrix`` vs ``matrix``, ``4`` vs ``4``).
Declarators must have as many pointer (or array) levels on both sides (``T* p`` against
``float* q``; a ``T`` against ``float*`` would make ``T`` a pointer, which no kernel instance
takes).  A parameter that does not match contributes nothing.
"""

from __future__ import annotations

from typing import Protocol

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.cst import COMMENT_IDS, QUALIFIER_IDS, F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import unqualified

_POINTERS = frozenset(
    {"pointer_declarator", "abstract_pointer_declarator", "array_declarator"}
    | {"abstract_array_declarator"}
)


class TypeScope(Protocol):
    """Where the written argument types are lowered (the caller, or the file)."""

    def type_node(self, node: ts.Node) -> A.CType | None: ...


def match_declaration(
    param: ts.Node,
    params: list[str],
    decl: ts.Node,
    declarator: ts.Node | None,
    scope: TypeScope,
) -> dict[str, A.CType]:
    """``T -> type`` from matching the template's parameter declaration ``param`` against the
    declaration ``decl`` (with its ``declarator``) of the argument; empty when they differ."""
    ptype, atype = param.child_by_field_id(F.type), decl.child_by_field_id(F.type)
    if ptype is None or atype is None or not mentions(ptype, params):
        return {}
    if _levels(param.child_by_field_id(F.declarator)) != _levels(declarator):
        return {}
    env: dict[str, A.CType] = {}
    return env if _unify(ptype, atype, params, scope, env) else {}


def mentions(node: ts.Node, params: list[str]) -> bool:
    """Whether the type ``node`` names one of the type parameters ``params``."""
    if node.type == "type_identifier":
        return _text(node) in params
    return any(mentions(c, params) for c in node.named_children)


def _levels(d: ts.Node | None) -> int:
    """Pointer and array levels of a declarator (references and names add none)."""
    n = 0
    while d is not None:
        if d.type in _POINTERS:
            n += 1
        inner = d.child_by_field_id(F.declarator)
        if inner is None and d.type in ("reference_declarator", "abstract_reference_declarator"):
            inner = next((c for c in d.named_children), None)
        d = inner
    return n


def _unify(
    p: ts.Node, a: ts.Node, params: list[str], scope: TypeScope, env: dict[str, A.CType]
) -> bool:
    """Walk ``p`` (with parameters) and ``a`` (written types) together, binding ``env``."""
    if p.type == "type_descriptor" and a.type == "type_descriptor":
        whole = _sole_parameter(p, params)
        if whole is not None:
            return _bind(whole, a, scope, env)
    if p.type == "type_identifier" and _text(p) in params:
        return _bind(_text(p), a, scope, env)
    if p.type != a.type:
        return False
    pk, ak = _parts(p), _parts(a)
    if not pk and not ak:
        return _text(p) == _text(a)
    return len(pk) == len(ak) and all(_unify(x, y, params, scope, env) for x, y in zip(pk, ak))


def _sole_parameter(desc: ts.Node, params: list[str]) -> str | None:
    """``T`` when the template argument ``desc`` is exactly a type parameter."""
    parts = _parts(desc)
    if len(parts) == 1 and parts[0].type == "type_identifier" and _text(parts[0]) in params:
        return _text(parts[0])
    return None


def _bind(name: str, written: ts.Node, scope: TypeScope, env: dict[str, A.CType]) -> bool:
    ty = scope.type_node(written)
    if ty is None or isinstance(ty, A.PointerType):
        return False
    ty = unqualified(ty)
    if env.get(name, ty) != ty:
        return False
    env[name] = ty
    return True


def _parts(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS | QUALIFIER_IDS]


__all__ = ["TypeScope", "match_declaration", "mentions"]
