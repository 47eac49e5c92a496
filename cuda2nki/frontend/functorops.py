"""A functor of the program's own, read as the reduction operation it computes.

Programs often pass a small struct of their own where CUB expects an operation::

    struct MaxOp {
        __device__ float operator()(float a, float b) const { return a > b ? a : b; }
    };
    float m = BlockReduce(tmp).Reduce(v, MaxOp());

:func:`functor_op` finds the struct (``MaxOp()``, ``MaxOp{}``, ``MaxOp<float>()``) in the file and
reads its ``operator()`` (a template one too): a body that is one ``return`` of the two
parameters combined is an operation the collectives know —

- ``a + b`` (either order): ``add``;
- ``a > b ? a : b``, ``a >= b ? a : b``, ``a < b ? b : a``, ``b < a ? a : b``..., ``max(a, b)``,
  ``fmaxf(a, b)``, ``std::max(a, b)``: ``max``; the mirrored forms: ``min``.

Parentheses, casts and ``std::forward<T>(x)`` around a parameter are looked through.  Anything
else (a member read, a second statement, a third value) is not recognised: None, and the caller
refuses the operation as before.  A ``max`` written with a comparison and one written with
``fmaxf`` differ only for NaN inputs, which the collectives' own ``max`` does not distinguish.
"""

from __future__ import annotations

import tree_sitter as ts

from cuda2nki.frontend.cst import F
from cuda2nki.frontend.lowerbase import _text

_CALLS = {
    "max": "max",
    "fmaxf": "max",
    "fmax": "max",
    "min": "min",
    "fminf": "min",
    "fmin": "min",
}
_STRUCTS = ("struct_specifier", "class_specifier")
_WRAPPERS = ("std::forward", "std::move", "static_cast", "forward", "move")


def functor_op(node: ts.Node) -> tuple[str, str] | None:
    """(add/max/min, the struct's name) for a functor of the file constructed in place at
    ``node``, else None."""
    name = _constructed(node)
    if name is None:
        return None
    for struct in _structs_named(_root(node), name):
        op = _struct_op(struct)
        if op is not None:
            return op, name
    return None


def _constructed(node: ts.Node) -> str | None:
    """``S()`` / ``S{}`` / ``S<float>()``: ``S``; else None."""
    if node.type == "call_expression":
        fn, args = node.child_by_field_id(F.function), node.child_by_field_id(F.arguments)
    elif node.type == "compound_literal_expression":
        fn, args = node.child_by_field_id(F.type), node.child_by_field_id(F.value)
    else:
        return None
    if fn is None or (args is not None and args.named_children):
        return None
    if fn.type in ("template_function", "template_type"):
        fn = fn.child_by_field_id(F.name)
    if fn is None or fn.type not in ("identifier", "type_identifier"):
        return None
    return _text(fn)


def _root(node: ts.Node) -> ts.Node:
    while node.parent is not None:
        node = node.parent
    return node


def _structs_named(root: ts.Node, name: str) -> list[ts.Node]:
    out: list[ts.Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type in _STRUCTS:
            tag = n.child_by_field_id(F.name)
            if tag is not None and _text(tag) == name and n.child_by_field_id(F.body) is not None:
                out.append(n)
            continue
        if n.type in ("function_definition", "compound_statement"):
            continue  # structs local to a function are not seen from elsewhere
        stack.extend(n.named_children)
    return out


def _struct_op(struct: ts.Node) -> str | None:
    """The operation of the struct's only ``operator()``, else None."""
    body = struct.child_by_field_id(F.body)
    calls = [f for f in _member_functions(body) if _is_call_operator(f)] if body else []
    return _function_op(calls[0]) if len(calls) == 1 else None


def _member_functions(body: ts.Node) -> list[ts.Node]:
    out: list[ts.Node] = []
    for child in body.named_children:
        if child.type == "template_declaration":
            out.extend(c for c in child.named_children if c.type == "function_definition")
        elif child.type == "function_definition":
            out.append(child)
    return out


def _function_declarator(fn: ts.Node) -> ts.Node | None:
    d = fn.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_id(F.declarator)
    return d


def _is_call_operator(fn: ts.Node) -> bool:
    d = _function_declarator(fn)
    name = d.child_by_field_id(F.declarator) if d is not None else None
    return name is not None and "".join(_text(name).split()) == "operator()"


def _function_op(fn: ts.Node) -> str | None:
    params = _parameter_names(fn)
    ret = _single_return(fn)
    if params is None or len(params) != 2 or ret is None:
        return None
    return _expr_op(ret, params[0], params[1])


def _parameter_names(fn: ts.Node) -> list[str] | None:
    d = _function_declarator(fn)
    plist = d.child_by_field_id(F.parameters) if d is not None else None
    if plist is None:
        return None
    names: list[str] = []
    for p in plist.named_children:
        decl = p.child_by_field_id(F.declarator)
        while decl is not None and decl.type != "identifier":
            decl = decl.child_by_field_id(F.declarator) or (
                decl.named_children[-1] if decl.named_children else None
            )
        if decl is None:
            return None
        names.append(_text(decl))
    return names


def _single_return(fn: ts.Node) -> ts.Node | None:
    body = fn.child_by_field_id(F.body)
    stmts = [s for s in body.named_children if s.type != "comment"] if body else []
    if len(stmts) != 1 or stmts[0].type != "return_statement" or not stmts[0].named_children:
        return None
    return stmts[0].named_children[0]


def _expr_op(e: ts.Node, a: str, b: str) -> str | None:
    e = _bare(e)
    pair = {a, b}
    if e.type == "binary_expression":
        op = e.child_by_field_id(F.operator)
        sides = _operands(e)
        return "add" if op is not None and _text(op) == "+" and sides == pair else None
    if e.type == "conditional_expression":
        return _select_op(e, pair)
    if e.type == "call_expression":
        fn = e.child_by_field_id(F.function)
        head = _text(fn).replace(" ", "").split("<")[0].rpartition("::")[2] if fn else ""
        args = e.child_by_field_id(F.arguments)
        names = [_name(x) for x in args.named_children] if args else []
        return _CALLS.get(head) if len(names) == 2 and set(names) == pair else None
    return None


def _select_op(e: ts.Node, pair: set[str]) -> str | None:
    """``p OP q ? x : y`` over the two parameters: max or min, else None."""
    cond = _bare(e.child_by_field_id(F.condition))  # type: ignore[arg-type]
    x = _name(e.child_by_field_id(F.consequence))
    y = _name(e.child_by_field_id(F.alternative))
    if cond.type != "binary_expression" or {x, y} != pair or x == y:
        return None
    op = cond.child_by_field_id(F.operator)
    left, right = _name(cond.child_by_field_id(F.left)), _name(cond.child_by_field_id(F.right))
    if op is None or {left, right} != pair or _text(op) not in (">", ">=", "<", "<="):
        return None
    greater = _text(op) in (">", ">=")
    return "max" if greater == (x == left) else "min"


def _operands(e: ts.Node) -> set[str | None]:
    return {_name(e.child_by_field_id(F.left)), _name(e.child_by_field_id(F.right))}


def _name(e: ts.Node | None) -> str | None:
    if e is None:
        return None
    e = _bare(e)
    return _text(e) if e.type == "identifier" else None


def _bare(e: ts.Node) -> ts.Node:
    """``e`` without parentheses, casts and ``std::forward<T>(...)`` around it."""
    while True:
        if e.type == "parenthesized_expression" and e.named_children:
            e = e.named_children[0]
        elif e.type == "cast_expression" and e.child_by_field_id(F.value) is not None:
            e = e.child_by_field_id(F.value)  # type: ignore[assignment]
        elif e.type == "call_expression" and _is_wrapper(e):
            e = e.child_by_field_id(F.arguments).named_children[0]  # type: ignore[union-attr]
        else:
            return e


def _is_wrapper(e: ts.Node) -> bool:
    fn = e.child_by_field_id(F.function)
    args = e.child_by_field_id(F.arguments)
    if fn is None or args is None or len(args.named_children) != 1:
        return False
    head = _text(fn).replace(" ", "").split("<")[0].lstrip(":")
    return head in _WRAPPERS
