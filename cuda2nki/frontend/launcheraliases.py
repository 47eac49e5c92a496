"""Calls of a host launcher through a function pointer that holds it.

A harness often keeps its launchers in a table or a variable and calls them through it::

    void (*versions[])(float*, const float*, int, int) = {launch_naive, launch_tiled};
    for (int v = 0; v < 2; v++) versions[v](out, in, n, 256);

    launcher_t run = use_tiled ? launch_tiled : launch_naive;   // or `run = &launch_tiled;`
    run(out, in, n, 128);

Each such call calls the launcher: its arguments flow into the launcher's parameters exactly as
for a direct call (see :meth:`cuda2nki.frontend.hostvals.HostEvaluator.pointer_calls`).
:func:`alias_calls` finds them: the pointer variables and arrays that are initialised or
assigned with the launcher (directly, as ``&f``, cast, or as one arm of a conditional), then
the calls through them (``run(...)``, ``(*run)(...)``, ``versions[i](...)``) in the function
that holds the pointer (anywhere, for a file-scope one).
"""

from __future__ import annotations

import tree_sitter as ts

from cuda2nki.frontend.hostsyntax import _walk_type

#: a call through a pointer is looked for in at most this many pointer holders per launcher
MAX_HOLDERS = 16


def alias_calls(root: ts.Node, name: str) -> list[ts.Node]:
    """The calls, in source order, that call the function ``name`` through a pointer variable
    or an array of pointers holding it."""
    holders = _holders(root, name)[:MAX_HOLDERS]
    if not holders:
        return []
    out: dict[int, ts.Node] = {}
    for var, is_table, scope in holders:
        for call in _walk_type(scope, "call_expression"):
            if _called_through(call, var, is_table):
                out[call.id] = call
    return sorted(out.values(), key=lambda c: c.start_byte)


def _holders(root: ts.Node, name: str) -> list[tuple[str, bool, ts.Node]]:
    """(pointer name, whether it is an array, the node its calls are looked for in) for each
    declaration or assignment that stores ``name``."""
    out: list[tuple[str, bool, ts.Node]] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "init_declarator":
            got = _declared(n, name)
            if got is not None:
                out.append((*got, _scope(n, root)))
        elif n.type == "assignment_expression" and _txt(n.child_by_field_name("operator")) == "=":
            got = _assigned(n, name)
            if got is not None:
                out.append((*got, _scope(n, root)))
        stack.extend(reversed(n.children))
    return out


def _declared(n: ts.Node, name: str) -> tuple[str, bool] | None:
    """``T (*v)(...) = name;`` -> (v, False); ``T (*v[])(...) = {a, name};`` -> (v, True)."""
    value = n.child_by_field_name("value")
    var, is_table = _declarator_name(n.child_by_field_name("declarator"))
    if value is None or not var:
        return None
    if is_table and value.type == "initializer_list":
        return (var, True) if any(_holds(v, name) for v in _kids(value)) else None
    return (var, False) if not is_table and _holds(value, name) else None


def _assigned(n: ts.Node, name: str) -> tuple[str, bool] | None:
    """``v = name;`` -> (v, False); ``v[k] = &name;`` -> (v, True)."""
    if not _holds(n.child_by_field_name("right"), name):
        return None
    left = _strip(n.child_by_field_name("left"))
    if left is not None and left.type == "identifier":
        return _txt(left), False
    if left is not None and left.type == "subscript_expression":
        arr = _strip(left.child_by_field_name("argument"))
        if arr is not None and arr.type == "identifier":
            return _txt(arr), True
    return None


def _holds(v: ts.Node | None, name: str) -> bool:
    """Whether the value ``v`` is the function ``name`` (``name``, ``&name``, a cast of it, an
    arm of a conditional)."""
    v = _strip(v)
    if v is None:
        return False
    if v.type == "conditional_expression":
        arms = (v.child_by_field_name("consequence"), v.child_by_field_name("alternative"))
        return any(_holds(a, name) for a in arms)
    return v.type in ("identifier", "qualified_identifier") and _txt(v).split("::")[-1] == name


def _declarator_name(d: ts.Node | None) -> tuple[str, bool]:
    """The name a declarator declares and whether it declares an array (of pointers)."""
    is_table = False
    while d is not None and d.type != "identifier":
        if d.type == "array_declarator":
            is_table = True
        inner = d.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in d.named_children if "declarator" in c.type), None)
            if inner is None:
                inner = next((c for c in d.named_children if c.type == "identifier"), None)
        d = inner
    return _txt(d), is_table


def _called_through(call: ts.Node, var: str, is_table: bool) -> bool:
    f = _strip(call.child_by_field_name("function"))
    if f is None:
        return False
    if is_table:
        if f.type != "subscript_expression":
            return False
        f = _strip(f.child_by_field_name("argument"))
    return f is not None and f.type == "identifier" and _txt(f) == var


def _strip(n: ts.Node | None) -> ts.Node | None:
    """``n`` without parentheses, casts, ``&`` and ``*`` around it."""
    while n is not None:
        if n.type == "parenthesized_expression":
            kids = _kids(n)
            n = kids[0] if len(kids) == 1 else None
        elif n.type == "cast_expression":
            n = n.child_by_field_name("value")
        elif n.type == "pointer_expression":
            n = n.child_by_field_name("argument")
        else:
            return n
    return None


def _scope(n: ts.Node, root: ts.Node) -> ts.Node:
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p if p is not None else root


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.type != "comment"]


def _txt(n: ts.Node | None) -> str:
    return "" if n is None else (n.text or b"").decode("utf-8", "replace").strip()
