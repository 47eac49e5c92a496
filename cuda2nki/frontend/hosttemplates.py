"""Type parameters of a template host launcher, deduced from its callers.

``template<typename T> void launch(float* out, const T* in, int n) { k<<<g, b>>>(out, in, n); }``
launches a template kernel ``k<T>`` whose ``T`` the launch site cannot tell: it is whatever the
callers of ``launch`` pass.  The file's calls of the launcher are read in order (explicit
template arguments ``launch<float>(...)``, else the declared types of the caller's arguments,
through the caller's own template parameters in turn); the first call that fixes every type
parameter gives them; a parameter written as a template (``const matrix<T>& m``) is matched
against the written type of the argument.  A launcher no call fixes takes the types of its
first explicit instantiation that fixes them all (``template void launch<float>(...);``, or
deduced from the written parameter types).  A launcher nothing fixes keeps them unknown (the
kernel then stays an uninstantiated template, as before).

Non-type parameters (``template <typename T, int BS> void launch(...) { k<T, BS><<<n / BS,
BS>>>(...); }``) take the constant a call writes for them (``launch<float, 128>(...)``, a
caller's own constant or template parameter, ``launch<T, 2 * TILE>``), so the kernel's template
arguments and the launch geometry that use them are known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.explicitinst import instantiation_envs, written_arguments
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import unqualified
from cuda2nki.frontend.typeunify import match_declaration

#: callers followed from one launcher at most (a launcher called by a launcher...)
MAX_DEPTH = 4


class Scope(Protocol):
    """What is read of a caller: the declared type of a name and its type lowering."""

    def declared_type(self, name: str) -> A.CType | None: ...

    def type_argument(self, node: ts.Node) -> A.CType | None: ...

    def type_node(self, node: ts.Node) -> A.CType | None: ...

    def declaration_of(self, name: str) -> tuple[ts.Node, ts.Node] | None: ...

    def value_argument(self, node: ts.Node) -> int | None: ...


def type_params(fnode: ts.Node) -> list[str]:
    """The ``typename`` parameters of a function template definition (none: not a template)."""
    return [n for n, is_type in _template_params(fnode) if is_type]


def is_template(fnode: ts.Node) -> bool:
    """Whether ``fnode`` is a function template with type or non-type parameters."""
    return bool(_template_params(fnode))


def value_params(fnode: ts.Node) -> list[str]:
    """The non-type parameters (``int BS``, ``unsigned N = 4``) of a function template."""
    return [n for n, is_type in _template_params(fnode) if not is_type]


def _template_params(fnode: ts.Node) -> list[tuple[str, bool]]:
    """(name, is a ``typename``) of each template parameter of ``fnode``, in order."""
    decl = fnode.parent
    if decl is None or decl.type != "template_declaration":
        return []
    plist = decl.child_by_field_id(F.parameters)
    out = []
    for p in plist.named_children if plist is not None else ():
        if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
            name = next((c for c in p.named_children if c.type == "type_identifier"), None)
            if name is not None:
                out.append((_text(name), True))
        elif p.type in ("parameter_declaration", "optional_parameter_declaration"):
            d = p.child_by_field_id(F.declarator)
            if d is not None and d.type == "identifier":
                out.append((_text(d), False))
    return out


def deduce(
    fnode: ts.Node,
    name: str,
    scope_of: Callable[[ts.Node | None, int], Scope],
    depth: int = 0,
) -> dict[str, A.CType | int]:
    """``T -> type`` for the type parameters and ``N -> value`` for the non-type parameters of
    the template host function ``fnode`` (named ``name``), from the first of its calls in the
    file that fixes them all; ``scope_of(caller, depth)`` reads a caller's declarations."""
    params = type_params(fnode)
    values = value_params(fnode)
    if not (params or values) or depth > MAX_DEPTH:
        return {}
    order = [n for n, _ in _template_params(fnode)]
    pnodes = _params(fnode)
    for call in _calls_to(_root(fnode), name):
        caller = scope_of(_enclosing(call), depth + 1)
        env: dict[str, A.CType | int] = dict(_explicit(call, order, caller))
        env.update(_explicit_values(call, order, values, caller))
        args = call.child_by_field_id(F.arguments)
        anodes = [c for c in args.named_children if c.kind_id not in COMMENT_IDS] if args else []
        for p, a in zip(pnodes, anodes):
            _deduce_one(p, a, params, caller, env)
        _match_written(pnodes, anodes, params, caller, env)
        env = {k: v for k, v in env.items() if not _placeholder(v)}
        if all(t in env for t in params + values):
            return env
    if values:  # an explicit instantiation gives types only here
        return {}
    file_scope = scope_of(None, depth + 1)
    for env in instantiation_envs(_root(fnode), name, pnodes, params, file_scope):
        if all(t in env for t in params):  # `template void run<float>(float*, int);`
            return dict(env)
    return {}


def _explicit_values(
    call: ts.Node, order: list[str], values: list[str], caller: Scope
) -> dict[str, int]:
    """``launch<float, 128>(...)``: the constants written for the non-type parameters."""
    fn = call.child_by_field_id(F.function)
    if fn is None or fn.type != "template_function" or not values:
        return {}
    targs = fn.child_by_field_id(F.arguments)
    kids = [c for c in targs.named_children if c.kind_id not in COMMENT_IDS] if targs else []
    out = {}
    for pname, k in zip(order, kids):
        if pname in values:
            v = caller.value_argument(k)
            if v is not None:
                out[pname] = v
    return out


def _match_written(
    pnodes: list[ts.Node], anodes: list[ts.Node], params: list[str], caller: Scope, env: dict
) -> None:
    """``const matrix<T>& m`` called with a name declared ``matrix<float> a``: the parameters
    still unknown, from the written types (see :mod:`cuda2nki.frontend.typeunify`)."""
    for p, a in zip(pnodes, anodes):
        if all(t in env for t in params):
            return
        found = caller.declaration_of(_text(a)) if a.type == "identifier" else None
        if found is not None:
            for k, v in match_declaration(p, params, found[0], found[1], caller).items():
                env.setdefault(k, v)


def _deduce_one(
    p: ts.Node, a: ts.Node, params: list[str], caller: Scope, env: dict[str, A.CType]
) -> None:
    """``T* v`` (or ``const T*``, ``T``, ``T&``) called with a name the caller declares."""
    t = p.child_by_field_id(F.type)
    if t is None or t.type != "type_identifier" or _text(t) not in params or _text(t) in env:
        return
    if a.type != "identifier":
        built = _constructed_type(a, caller)  # `run(out, Put(1.5))`, `run(out, Put{1.5})`
        if built is not None and not _pointer_declarator(p):
            env[_text(t)] = built
        return
    aty = caller.declared_type(_text(a))
    d = p.child_by_field_id(F.declarator)
    while aty is not None and d is not None and d.type != "identifier":
        if d.type == "pointer_declarator" or d.type == "array_declarator":
            aty = aty.pointee if isinstance(aty, A.PointerType) else getattr(aty, "elem", None)
        d = d.child_by_field_id(F.declarator) or next(
            (c for c in d.named_children if c.type != "type_qualifier"), None
        )
    if aty is not None and not isinstance(aty, A.PointerType):
        env[_text(t)] = unqualified(aty)


def _constructed_type(a: ts.Node, caller: Scope) -> A.CType | None:
    """The type of an argument that constructs a value of a named type: a constructor call or
    functional cast ``Put(1.5)``, a braced ``Put{1.5}`` (None: another expression, or a name
    that is no type)."""
    if a.type == "call_expression":
        fn = a.child_by_field_id(F.function)
    elif a.type == "compound_literal_expression":
        fn = a.child_by_field_id(F.type)
    else:
        return None
    if fn is None or fn.type not in ("identifier", "type_identifier", "template_type"):
        return None
    ty = caller.type_node(fn)
    if ty is None or isinstance(ty, A.OpaqueType):
        return None
    return unqualified(ty)


def _pointer_declarator(p: ts.Node) -> bool:
    d = p.child_by_field_id(F.declarator)
    return d is not None and d.type in ("pointer_declarator", "array_declarator")


def _placeholder(ty: object) -> bool:
    """``auto`` (a lambda's or an iterator's type): no type a kernel can be instantiated with."""
    return isinstance(ty, A.OpaqueType) and ty.name == "auto"


def _explicit(call: ts.Node, params: list[str], caller: Scope) -> dict[str, A.CType]:
    """``launch<float, half>(...)``: the written template arguments, in order."""
    return written_arguments(call.child_by_field_id(F.function), params, caller)


def _params(fnode: ts.Node) -> list[ts.Node]:
    d = fnode.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_id(F.declarator)
    plist = d.child_by_field_id(F.parameters) if d is not None else None
    if plist is None:
        return []
    return [c for c in plist.named_children if c.kind_id not in COMMENT_IDS]


def _calls_to(root: ts.Node, name: str) -> list[ts.Node]:
    """Calls of ``name`` (``name(...)``, ``name<...>(...)``) in the file, in source order."""
    out = []
    stack = [root]
    key = name.encode()
    while stack:
        n = stack.pop()
        if n.type == "call_expression":
            fn = n.child_by_field_id(F.function)
            if fn is not None and fn.type == "template_function":
                fn = fn.child_by_field_id(F.name)
            if fn is not None and fn.type == "identifier" and fn.text == key:
                out.append(n)
        stack.extend(reversed(n.children))
    return out


def _root(n: ts.Node) -> ts.Node:
    while n.parent is not None:
        n = n.parent
    return n


def _enclosing(n: ts.Node) -> ts.Node | None:
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p


__all__ = ["MAX_DEPTH", "deduce", "is_template", "type_params", "value_params"]
