"""Indexes of a host function's declarations and assignments, built once per scope.

Host-value evaluation (:mod:`cuda2nki.frontend.hostvals`) asks, thousands of times per file
with launcher chains across a tree, for the last declaration of a name before a point and the
first assignment of a name in a range.  Walking the scope's syntax tree for each question made a
file of a few hundred lines take minutes; each scope is now walked once and the questions are
answered from its index.  The answers are those of the walks they replace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tree_sitter as ts

#: one declarator of a declaration: (start byte of the declarator, name, kind, declaration,
#: initial value).  The declarator's own start (not the declaration's) orders the declarators of
#: one declaration, so that ``int a = n, b = a + 1;`` sees ``a`` when it evaluates ``b``.
Decl = tuple[int, str, str, ts.Node, ts.Node | None]
#: one plain assignment: (start byte, end byte, the left side's text, the right side)
Assign = tuple[int, int, str, ts.Node | None]

#: scopes indexed at most (the oldest are dropped past it)
MAX_SCOPES = 512

_decls: dict[tuple[Any, ...], tuple[ts.Node, list[Decl]]] = {}
_assigns: dict[tuple[Any, ...], tuple[ts.Node, list[Assign]]] = {}


def _key(scope: ts.Node, top: bool) -> tuple[Any, ...]:
    return (scope.id, scope.start_byte, scope.end_byte, scope.type, top)


def _remember(cache: dict, key: tuple[Any, ...], value: Any) -> None:
    if len(cache) >= MAX_SCOPES:
        cache.pop(next(iter(cache)))
    cache[key] = value


def declarations(
    scope: ts.Node,
    top: bool,
    declared_name: Callable[[ts.Node], tuple[str | None, ts.Node | None, bool]],
) -> list[Decl]:
    """Every declarator in ``scope`` (its body; with ``top``, the scope itself without entering
    function definitions), in the order a depth-first walk meets them."""
    key = _key(scope, top)
    got = _decls.get(key)
    if got is not None and got[0] == scope:
        return got[1]
    out: list[Decl] = []
    stack = [scope.child_by_field_name("body") if not top else scope]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if n.type == "declaration":
            for c in n.children_by_field_name("declarator"):
                name, value, _ = declared_name(c)
                if name is not None:
                    loop = n.parent is not None and n.parent.type == "for_statement"
                    out.append((c.start_byte, name, "loop" if loop else "local", n, value))
        if top and n.type == "function_definition":
            continue
        stack.extend(n.children)
    _remember(_decls, key, (scope, out))
    return out


def assignments(fn: ts.Node, text: Callable[[ts.Node | None], str]) -> list[Assign]:
    """Every ``left = right`` in ``fn``'s body."""
    key = _key(fn, False)
    got = _assigns.get(key)
    if got is not None and got[0] == fn:
        return got[1]
    out: list[Assign] = []
    stack = [fn.child_by_field_name("body")]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if n.type == "assignment_expression" and text(n.child_by_field_name("operator")) == "=":
            left = n.child_by_field_name("left")
            if left is not None:
                out.append((n.start_byte, n.end_byte, text(left), n.child_by_field_name("right")))
        stack.extend(n.children)
    _remember(_assigns, key, (fn, out))
    return out


_members: dict[tuple[Any, ...], tuple[ts.Node, dict[str, list[ts.Node]]]] = {}


def member_assignments(
    scope: ts.Node, text: Callable[[ts.Node | None], str]
) -> dict[str, list[ts.Node]]:
    """Every ``X.field = v`` / ``X->field = v`` in ``scope`` (the scope itself included), by
    field name, each list in source order."""
    key = _key(scope, True)
    got = _members.get(key)
    if got is not None and got[0] == scope:
        return got[1]
    out: dict[str, list[ts.Node]] = {}
    stack = [scope]
    while stack:
        n = stack.pop()
        if n.type == "assignment_expression" and text(n.child_by_field_name("operator")) == "=":
            left = n.child_by_field_name("left")
            if left is not None and left.type == "field_expression":
                out.setdefault(text(left.child_by_field_name("field")), []).append(n)
        stack.extend(reversed(n.children))
    _remember(_members, key, (scope, out))
    return out


_defaults: dict[tuple[Any, ...], tuple[ts.Node, dict[str, list[ts.Node]]]] = {}


def field_defaults(
    root: ts.Node, text: Callable[[ts.Node | None], str]
) -> dict[str, list[ts.Node]]:
    """The default member initializers (``int field = v;``) of the structs and classes of
    ``root`` outside function bodies, by the declarator's text, each list in source order."""
    key = _key(root, True)
    got = _defaults.get(key)
    if got is not None and got[0] == root:
        return got[1]
    out: dict[str, list[ts.Node]] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "field_declaration":
            value = n.child_by_field_name("default_value")
            if value is not None:
                decl = text(n.child_by_field_name("declarator"))
                out.setdefault(decl, []).append(value)
        if n.type not in ("function_definition", "compound_statement"):
            stack.extend(reversed(n.children))
    _remember(_defaults, key, (root, out))
    return out


_ctor_values: dict[tuple[Any, ...], tuple[ts.Node, dict[str, list[tuple[ts.Node, ts.Node]]]]] = {}


def constructor_values(
    root: ts.Node, text: Callable[[ts.Node | None], str]
) -> dict[str, list[tuple[ts.Node, ts.Node]]]:
    """What the constructors of the file's structs and classes store in their members before
    anything else: ``: width(64)`` initializers and ``width = 64;`` statements of the body's top
    level (an option parser's defaults, before the loop that reads the options), by member name,
    each (the constructor, the value) in source order."""
    key = _key(root, True)
    got = _ctor_values.get(key)
    if got is not None and got[0] == root:
        return got[1]
    out: dict[str, list[tuple[ts.Node, ts.Node]]] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "function_definition":
            if _is_constructor(n, text):
                for name, value in _stored(n, text):
                    out.setdefault(name, []).append((n, value))
            continue
        stack.extend(reversed(n.children))
    _remember(_ctor_values, key, (root, out))
    return out


def _is_constructor(fn: ts.Node, text: Callable[[ts.Node | None], str]) -> bool:
    decl = fn.child_by_field_name("declarator")
    if decl is None or decl.type != "function_declarator":
        return False
    name = text(decl.child_by_field_name("declarator"))
    if "::" in name:  # `Opts::Opts(...)` defined outside its class
        scope, _, own = name.rpartition("::")
        return own == scope.rpartition("::")[2]
    body = fn.parent
    owner = body.parent if body is not None and body.type == "field_declaration_list" else None
    if owner is None or owner.type not in ("struct_specifier", "class_specifier"):
        return False
    return text(owner.child_by_field_name("name")) == name


def _stored(fn: ts.Node, text: Callable[[ts.Node | None], str]) -> list[tuple[str, ts.Node]]:
    """(member, value) of a constructor's initializers, then of its body's top-level plain
    assignments of a bare name, each member once (the first)."""
    out: list[tuple[str, ts.Node]] = []
    for c in fn.children:
        if c.type != "field_initializer_list":
            continue
        for init in c.named_children:
            args = init.child_by_field_name("arguments") or next(
                (a for a in init.named_children if a.type in ("argument_list", "initializer_list")),
                None,
            )
            member = next((a for a in init.named_children if a.type == "field_identifier"), None)
            if member is not None and args is not None and len(args.named_children) == 1:
                out.append((text(member), args.named_children[0]))
    body = fn.child_by_field_name("body")
    for stmt in body.named_children if body is not None else ():
        e = (
            stmt.named_children[0]
            if stmt.type == "expression_statement" and stmt.named_children
            else None
        )
        if e is None or e.type != "assignment_expression":
            continue
        left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
        if (
            text(e.child_by_field_name("operator")) == "="
            and left is not None
            and left.type == "identifier"
            and right is not None
        ):
            out.append((text(left), right))
    seen: set[str] = set()
    return [(m, v) for m, v in out if not (m in seen or seen.add(m))]
