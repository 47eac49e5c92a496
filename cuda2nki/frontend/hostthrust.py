"""Thrust device vectors as allocations: ``thrust::device_vector<int> v(n, 0);`` holds ``n``
ints, and the raw pointer a launch passes is taken from it
(``int* p = thrust::raw_pointer_cast(&v[0]);``, ``thrust::raw_pointer_cast(v.data())``,
``v.data().get()``), so the kernel's buffer is ``n * sizeof(int)`` bytes, as with
``cudaMalloc``.  A vector built from another container (``device_vector<int> d(h)``) or
resized later is not read (its size is not the constructor's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator, HostExpr

#: the containers whose constructor's first argument is their element count
_VECTORS = frozenset({"device_vector", "universal_vector", "host_vector"})


def vector_behind(expr: ts.Node) -> str | None:
    """The vector a raw device pointer comes from: ``raw_pointer_cast(&v[0])``,
    ``raw_pointer_cast(v.data())``, ``v.data().get()`` (casts around it allowed)."""
    e = _strip(expr)
    if e.type == "call_expression" and _callee(e) == "raw_pointer_cast":
        items = _args(e)
        return _element_zero(items[0]) if len(items) == 1 else None
    if e.type == "call_expression" and _callee(e) == "get":  # `v.data().get()`
        f = e.child_by_field_name("function")
        inner = f.child_by_field_name("argument") if f is not None else None
        return _element_zero(inner) if inner is not None else None
    return None


def aliased_vector(n: ts.Node, name: str) -> str | None:
    """The vector whose raw pointer the declaration or assignment ``n`` stores in ``name``."""
    from cuda2nki.frontend.hostsyntax import stored_value

    value = stored_value(n, name)
    return vector_behind(value) if value is not None else None


def vector_declaration(n: ts.Node, name: str) -> tuple[str, ts.Node] | None:
    """(element type, element count node) when ``n`` declares the vector ``name`` with a count
    (``device_vector<float> v(n)``, ``device_vector<int> v(n, 0)``)."""
    if n.type != "declaration":
        return None
    elem = _element_type(n.child_by_field_name("type"))
    if elem is None:
        return None
    for d in n.children_by_field_name("declarator"):
        if d.type == "init_declarator":
            ident, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
            if ident is None or _txt(ident) != name or value is None:
                continue
            if value.type == "argument_list":
                items = _args_of(value)
                return (elem, items[0]) if items else None
        elif d.type == "function_declarator":  # `device_vector<float> v(n);` read as a function
            ident, params = d.child_by_field_name("declarator"), d.child_by_field_name("parameters")
            if ident is None or _txt(ident) != name or params is None:
                continue
            items = [c for c in params.named_children if c.type != "comment"]
            if len(items) == 1 and items[0].named_child_count == 1:
                return elem, items[0].named_children[0]
    return None


def _element_type(t: ts.Node | None) -> str | None:
    if t is not None and t.type == "qualified_identifier":
        t = t.child_by_field_name("name")
    if t is None or t.type != "template_type":
        return None
    name = t.child_by_field_name("name")
    if name is None or _txt(name) not in _VECTORS:
        return None
    args = t.child_by_field_name("arguments")
    kids = [c for c in args.named_children if c.type != "comment"] if args is not None else []
    return _txt(kids[0]).replace("const ", "").strip() if kids else None


def _element_zero(n: ts.Node) -> str | None:
    """``v`` of ``&v[0]`` or ``v.data()``."""
    n = _strip(n)
    if n.type == "pointer_expression" and _txt(n).startswith("&"):
        arg = n.child_by_field_name("argument")
        if arg is not None and arg.type == "subscript_expression":
            base = arg.child_by_field_name("argument")
            idx = arg.child_by_field_name("indices") or arg.child_by_field_name("index")
            zero = idx is not None and _txt(idx).strip("[] ") == "0"
            return _txt(base) if base is not None and base.type == "identifier" and zero else None
    if n.type == "call_expression" and _callee(n) == "data" and not _args(n):
        f = n.child_by_field_name("function")
        base = f.child_by_field_name("argument") if f is not None else None
        return _txt(base) if base is not None and base.type == "identifier" else None
    return None


def _strip(n: ts.Node) -> ts.Node:
    """``n`` without C casts, C++ casts (``reinterpret_cast<T*>(x)``) and parentheses."""
    while True:
        if n.type == "cast_expression":
            n = n.child_by_field_name("value") or n
        elif n.type == "parenthesized_expression" and n.named_children:
            n = n.named_children[0]
        elif n.type == "call_expression" and _callee(n) in (
            "reinterpret_cast",
            "static_cast",
        ):
            items = _args(n)
            if len(items) != 1:
                return n
            n = items[0]
        else:
            return n


def _callee(call: ts.Node) -> str:
    f = call.child_by_field_name("function")
    if f is None:
        return ""
    if f.type == "field_expression":
        f = f.child_by_field_name("field")
    elif f.type == "template_function":
        f = f.child_by_field_name("name")
    return _txt(f).split("::")[-1] if f is not None else ""


def _args(call: ts.Node) -> list[ts.Node]:
    a = call.child_by_field_name("arguments")
    return _args_of(a) if a is not None else []


def _args_of(a: ts.Node) -> list[ts.Node]:
    return [c for c in a.named_children if c.type != "comment"]


def _txt(n: ts.Node) -> str:
    return n.text.decode("utf-8", "replace") if n.text else ""


def vector_bytes(  # noqa: PLR0913 - the search state of hostalloc._find
    ev: HostEvaluator,
    elem: str,
    count: ts.Node,
    at: ts.Node,
    fnode: ts.Node,
    argmap: dict[str, int],
    depth: int,
) -> HostExpr | None:
    """The bytes of a vector of ``count`` ``elem``s declared at ``at`` (None: not evaluable)."""
    from cuda2nki.frontend.hostsyntax import _one_line
    from cuda2nki.frontend.hostvalue import _SIZEOF, HostExpr, _binary, _const, _NoValue, _Scope

    if elem not in _SIZEOF:
        return None
    scope = _Scope(fnode, at.start_byte, dict(argmap), depth + 1)
    try:
        v = _binary("*", ev.eval(count, scope), _const(_SIZEOF[elem]))
    except _NoValue:
        return None
    if v.items is not None or (v.text is None and v.num is None):
        return None
    where = (f"{ev.where(at)}: {_one_line(at)}",)
    return HostExpr(v.text, v.num, tuple(dict.fromkeys(where + v.ev)), v.notes)


__all__ = ["aliased_vector", "vector_behind", "vector_bytes", "vector_declaration"]
