"""Allocation sizes of the pointers a launch passes: evidence for the extent of a tensor whose
accesses do not bound it (a gather table ``wte[ix * C + c]`` where ``ix`` is data).

For a pointer argument of a launch, the host function is searched for its allocation, and the
launcher's callers when the pointer is a parameter of the launcher (launcher chains):

* ``cudaMalloc(&p, E)``, ``cudaMalloc((void**)&p, E)``, ``cudaMallocManaged(&p, E, flags)``,
  ``cudaMallocHost`` / ``cudaHostAlloc`` / ``cudaMallocAsync``;
* ``p = (T*)malloc(E)``, ``T* p = (T*)calloc(n, s)``, ``T* p = new T[n]``;
* a thrust vector's raw pointer (``T* p = thrust::raw_pointer_cast(&v[0])`` with
  ``thrust::device_vector<T> v(n)``): ``n * sizeof(T)``, see :mod:`cuda2nki.frontend.hostthrust`;
* the allocation of the pointer ``p`` is a plain copy of (``p = buffer;``);
* else the size of a ``cudaMemcpy`` to or from ``p``, or the allocation of the host mirror it
  is copied from (``cudaMemcpy(d_x, h_x, ...)`` with ``h_x = new float[n]``).

The size, in bytes, is evaluated like any host value (locals such as ``size_t bytes = B * T * C
* sizeof(float)``, ``#define``d sizes, constants); a host name that the launch passes as a
kernel argument is that parameter, also through a launcher chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend.hostthrust import (
    aliased_vector,
    vector_behind,
    vector_bytes,
    vector_declaration,
)

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator, HostExpr

#: allocation calls that write the pointer through their first argument
_OUT_ALLOC = frozenset(
    "cudaMalloc cudaMallocManaged cudaMallocHost cudaHostAlloc cudaMallocAsync".split()
)
_COPIES = frozenset("cudaMemcpy cudaMemcpyAsync".split())
_MAX_CHAIN = 6


def alloc_bytes(
    ev: HostEvaluator, arg: ts.Node, call: ts.Node, argmap: dict[str, int]
) -> HostExpr | None:
    """The allocation size in bytes of the pointer ``arg`` passed at the launch ``call`` (None:
    not found or not evaluable); ``argmap``: host name -> kernel argument position."""
    from cuda2nki.frontend.hostsyntax import _enclosing

    name = _pointer_name(arg) or vector_behind(arg)  # `thrust::raw_pointer_cast(v.data())`
    fnode = _enclosing(call)
    if fnode is not None and name is None and _strip(arg).type == "field_expression":
        from cuda2nki.frontend.hoststructs import field_alloc

        return field_alloc(ev, fnode, _strip(arg))  # `s->data`, `grid.cells`
    if name is None or fnode is None:
        return None
    return _find(ev, name, fnode, argmap, 0, mirror=True)


def _find(
    ev: HostEvaluator,
    name: str,
    fnode: ts.Node,
    argmap: dict[str, int],
    depth: int,
    mirror: bool,
) -> HostExpr | None:
    from cuda2nki.frontend.hostsyntax import _enclosing, _function_name, _params

    if depth > _MAX_CHAIN:
        return None
    copy: tuple[ts.Node, ts.Node, str | None] | None = None
    for n in _candidates(ev, fnode):
        got = _allocation(n, name)
        if got is not None:
            return _bytes(ev, got, n, fnode, argmap, depth)
        # thrust device vectors; a plain alias `p = buffer;` is the buffer's allocation
        vec = vector_declaration(n, name) or aliased_vector(n, name) or _alias(n, name)
        if isinstance(vec, tuple):
            return vector_bytes(ev, vec[0], vec[1], n, fnode, argmap, depth)
        if vec is not None:
            return _find(ev, vec, fnode, argmap, depth + 1, mirror)
        if n.type == "call_expression" and _callee(n) not in _OUT_ALLOC:
            from cuda2nki.frontend.hostallocwrap import wrapped_bytes

            wrapped = wrapped_bytes(ev, n, name, fnode, argmap, depth)  # `grab((void**)&p, n)`
            if wrapped is not None:
                return wrapped
        if copy is None and n.type == "call_expression" and _callee(n) in _COPIES:
            items = _args(n)
            names = [_pointer_name(a) for a in items[:2]]
            if len(items) >= 3 and name in names:
                other = names[1 - names.index(name)]
                copy = (items[2], n, other)
    if copy is not None:
        size, n, other = copy
        got = _bytes(ev, size, n, fnode, argmap, depth)
        if got is None and mirror and other is not None:
            got = _find(ev, other, fnode, argmap, depth + 1, mirror=False)
        if got is not None:
            return got
    params = _params(fnode)
    if name not in params:
        return None
    idx = params.index(name)
    fname = _function_name(fnode) or ""
    for c, cev in _launcher_calls(ev, fname):
        caller = _enclosing(c)
        items = _args(c)
        if caller is None or caller is fnode or idx >= len(items):
            continue
        inner = _pointer_name(items[idx])
        if inner is None:
            continue
        got = _find(cev, inner, caller, _caller_argmap(argmap, params, items), depth + 1, mirror)
        if got is not None:
            return got
    return None


def _launcher_calls(ev: HostEvaluator, fname: str) -> list[tuple[ts.Node, HostEvaluator]]:
    """The calls of launcher ``fname`` with the evaluator of their file: those of this file,
    else those of the other files of the tree (a launcher in ``kernels.cu`` whose buffers
    ``main.cu`` allocates; see :mod:`cuda2nki.frontend.callers`)."""
    own = [(c, ev) for c in ev.calls(fname)]
    if own or not fname:
        return own
    return ev.foreign_calls(fname)


def _caller_argmap(
    argmap: dict[str, int], params: list[str], items: list[ts.Node]
) -> dict[str, int]:
    """A launcher parameter passed on as kernel argument i is, in the caller, the name the
    caller passes for that parameter."""
    out = {}
    for p, i in argmap.items():
        if p in params and params.index(p) < len(items):
            a = _strip(items[params.index(p)])
            if a.type == "identifier":
                out[_txt_of(a)] = i
    return out


def _bytes(
    ev: HostEvaluator,
    size: ts.Node,
    at: ts.Node,
    fnode: ts.Node,
    argmap: dict[str, int],
    depth: int,
) -> HostExpr | None:
    from cuda2nki.frontend.hostsyntax import _one_line
    from cuda2nki.frontend.hostvalue import HostExpr, _NoValue, _Scope

    scope = _Scope(fnode, at.start_byte, dict(argmap), depth + 1)
    try:
        v = _size_value(ev, size, scope)
    except _NoValue:
        return None
    if v.items is not None or (v.text is None and v.num is None):
        return None
    where = (f"{ev.where(at)}: {_one_line(at)}",)
    return HostExpr(v.text, v.num, tuple(dict.fromkeys(where + v.ev)), v.notes)


def _size_value(ev: HostEvaluator, size: ts.Node, scope: object):  # noqa: ANN202
    """The bytes of ``malloc(E)`` (E), ``calloc(n, s)`` (n * s) or ``new T[n]`` (n * sizeof(T))."""
    from cuda2nki.frontend.hostvalue import _SIZEOF, _binary, _const, _NoValue

    if size.type == "argument_list":  # calloc
        a, b = (ev.eval(x, scope) for x in _args_of_list(size))
        return _binary("*", a, b)
    if size.type == "new_expression":
        ty = _txt_of(size.child_by_field_name("type")).replace("const ", "").strip()
        if ty not in _SIZEOF:
            raise _NoValue
        length = size.child_by_field_name("declarator").child_by_field_name("length")
        return _binary("*", ev.eval(length, scope), _const(_SIZEOF[ty]))
    return ev.eval(size, scope)


def _args_of_list(a: ts.Node) -> list[ts.Node]:
    return [c for c in a.named_children if c.type != "comment"]


def _allocation(n: ts.Node, name: str) -> ts.Node | None:
    """The size expression (bytes) if ``n`` allocates ``name``: an out-parameter allocation
    call, or a declaration / assignment from ``malloc`` / ``calloc`` / ``new T[n]``."""
    if n.type == "call_expression" and _callee(n) in _OUT_ALLOC:
        items = _args(n)
        if len(items) >= 2 and _address_of(items[0]) == name:
            return items[1]
        return None
    from cuda2nki.frontend.hostsyntax import stored_value

    value = stored_value(n, name, lambda left, nm: _pointer_name(left) == nm)
    return None if value is None else _host_alloc(value)


def _alias(n: ts.Node, name: str) -> str | None:
    """``q`` when ``n`` stores the pointer ``q`` itself in ``name`` (``T* name = (T*)q;``,
    ``name = q;``): the buffer is ``q``'s."""
    from cuda2nki.frontend.hostsyntax import stored_value

    value = stored_value(n, name)
    other = _pointer_name(value) if value is not None else None
    return other if other != name else None


def _host_alloc(value: ts.Node) -> ts.Node | None:
    v = _strip(value)
    if v.type == "call_expression" and _callee(v) == "malloc":
        items = _args(v)
        return items[0] if items else None
    if v.type == "call_expression" and _callee(v) == "calloc":
        items = _args(v)
        return v.child_by_field_name("arguments") if len(items) == 2 else None
    if v.type == "new_expression":
        d = v.child_by_field_name("declarator")
        length = d.child_by_field_name("length") if d is not None else None
        return v if length is not None else None
    return None


#: the node types an allocation, alias, vector or copy of a pointer can be
_SEARCHED = frozenset(
    ("call_expression", "init_declarator", "assignment_expression", "declaration")
)


def _candidates(ev: HostEvaluator, fnode: ts.Node) -> list[ts.Node]:
    """The nodes of ``fnode`` that :func:`_find` matches, in source (pre-)order, listed once
    per function: a launch of many buffers searches the same function for each of them."""
    got = ev.alloc_nodes.get(fnode)
    if got is None:
        got = ev.alloc_nodes[fnode] = [n for n in _walk(fnode) if n.type in _SEARCHED]
    return got


def _walk(node: ts.Node) -> Iterator[ts.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _callee(call: ts.Node) -> str:
    f = call.child_by_field_name("function")
    return f.text.decode("utf-8", "replace").split("::")[-1] if f is not None and f.text else ""


def _args(call: ts.Node) -> list[ts.Node]:
    a = call.child_by_field_name("arguments")
    return _args_of_list(a) if a is not None else []


def _strip(n: ts.Node) -> ts.Node:
    """``n`` without casts and parentheses."""
    while True:
        if n.type == "cast_expression":
            n = n.child_by_field_name("value") or n
        elif n.type == "parenthesized_expression" and n.named_children:
            n = n.named_children[0]
        else:
            return n


def _pointer_name(n: ts.Node) -> str | None:
    n = _strip(n)
    return _txt_of(n) if n.type == "identifier" else None


def _address_of(n: ts.Node) -> str | None:
    n = _strip(n)
    if n.type == "pointer_expression" and _txt_of(n).startswith("&"):
        arg = n.child_by_field_name("argument")
        return _pointer_name(arg) if arg is not None else None
    return None


def _txt_of(n: ts.Node) -> str:
    return n.text.decode("utf-8", "replace") if n.text else ""
