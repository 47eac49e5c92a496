"""Explicit instantiations of a template host function: ``template void run<float>(float*,
int);`` or, with the arguments deduced from the written parameter types, ``template
std::vector<double> solve(const matrix<double>&, int);``.  A launcher no call in the file
instantiates (a library translation unit whose callers live elsewhere) is compiled for the
types its explicit instantiations name; the first one that fixes every type parameter gives
them.
"""

from __future__ import annotations

from typing import Protocol

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import unqualified
from cuda2nki.frontend.typeunify import TypeScope, match_declaration

#: the blocks of a file an explicit instantiation may stand in
_CONTAINERS = frozenset({"namespace_definition", "linkage_specification", "declaration_list"})


class FileScope(TypeScope, Protocol):
    def type_argument(self, node: ts.Node) -> A.CType | None: ...


def instantiation_envs(
    root: ts.Node, name: str, pnodes: list[ts.Node], params: list[str], scope: FileScope
) -> list[dict[str, A.CType]]:
    """``T -> type`` of each explicit instantiation of the function ``name`` in the file
    ``root`` (whose parameter declarations are ``pnodes``), in source order."""
    out = []
    for inst in _instantiations(root, name):
        d = _function_declarator(inst)
        if d is None:
            continue
        env = _written_arguments(d, params, scope)
        plist = d.child_by_field_id(F.parameters)
        written = [c for c in plist.named_children if c.kind_id not in COMMENT_IDS] if plist else []
        for p, q in zip(pnodes, written):
            for k, v in match_declaration(
                p, params, q, q.child_by_field_id(F.declarator), scope
            ).items():
                env.setdefault(k, v)
        out.append(env)
    return out


def _instantiations(root: ts.Node, name: str) -> list[ts.Node]:
    """The ``template_instantiation`` nodes of function ``name`` at namespace level."""
    out: list[ts.Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        for c in reversed(n.named_children):
            if c.type == "template_instantiation":
                d = _function_declarator(c)
                if d is not None and _declared_name(d) == name:
                    out.append(c)
            elif c.type in _CONTAINERS:
                stack.append(c)
    out.sort(key=lambda n: n.start_byte)
    return out


def _function_declarator(inst: ts.Node) -> ts.Node | None:
    d = inst.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_id(F.declarator)
    return d


def _declared_name(d: ts.Node) -> str | None:
    fn = d.child_by_field_id(F.declarator)
    if fn is not None and fn.type == "template_function":
        fn = fn.child_by_field_id(F.name)
    if fn is not None and fn.type == "qualified_identifier":
        fn = fn.child_by_field_id(F.name)
    return _text(fn) if fn is not None and fn.type == "identifier" else None


def _written_arguments(d: ts.Node, params: list[str], scope: FileScope) -> dict[str, A.CType]:
    """``run<float, int>``: the explicit template arguments, in order."""
    return written_arguments(d.child_by_field_id(F.declarator), params, scope)


def written_arguments(
    fn: ts.Node | None, params: list[str], scope: FileScope
) -> dict[str, A.CType]:
    """Template parameter -> the type written for it at ``fn`` (``name<float, int>``, a
    ``template_function`` node), in order; empty for a name written without arguments."""
    if fn is None or fn.type != "template_function":
        return {}
    targs = fn.child_by_field_id(F.arguments)
    kids = [c for c in targs.named_children if c.kind_id not in COMMENT_IDS] if targs else []
    env: dict[str, A.CType] = {}
    for pname, k in zip(params, kids):
        ty = scope.type_argument(k)
        if ty is not None:
            env[pname] = unqualified(ty)
    return env


__all__ = ["instantiation_envs"]
