"""Host-code idioms of launch geometry that :mod:`cuda2nki.frontend.hostvals` recognises by form.

* Rounding up by a remainder test, as an expression (``n / b + (n % b ? 1 : 0)``,
  ``(n / b) + (!(n % b) ? 0 : 1)``, ``n / b + (n % b != 0)``) or as a statement after the
  division (``blocks = n / b; if (n % b != 0) blocks++;``): both are ``ceil_div(n, b)``.
* A ``dim3`` declared without a value and filled member by member (``dim3 threads;
  threads.x = 256;``): the value of each member at the launch, 1 for a member never set.
"""

from __future__ import annotations

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def _txt(n: ts.Node | None) -> str:
    return "" if n is None else "".join(n.text.decode("utf-8", "replace").split())


def _bare(n: ts.Node | None) -> ts.Node | None:
    """``n`` without the parentheses around it."""
    while n is not None and n.type == "parenthesized_expression":
        inner = _kids(n)
        if len(inner) != 1:
            return n
        n = inner[0]
    return n


def _binary(n: ts.Node | None, *ops: str) -> tuple[ts.Node, str, ts.Node] | None:
    n = _bare(n)
    if n is None or n.type != "binary_expression":
        return None
    op = _txt(n.child_by_field_name("operator"))
    if op not in ops:
        return None
    return n.child_by_field_name("left"), op, n.child_by_field_name("right")


def _same(a: ts.Node | None, b: ts.Node | None) -> bool:
    return _txt(_bare(a)) == _txt(_bare(b)) and _txt(a) != ""


def _int(n: ts.Node | None) -> int | None:
    n = _bare(n)
    if n is None or n.type != "number_literal":
        return None
    try:
        return int(_txt(n).rstrip("uUlL"), 0)
    except ValueError:
        return None


def _remainder_test(cond: ts.Node | None, a: ts.Node, b: ts.Node) -> bool | None:
    """Whether ``cond`` is true exactly when ``a % b`` is not 0 (True), exactly when it is 0
    (False), or neither / not about ``a % b`` (None)."""
    cond = _bare(cond)
    if cond is None:
        return None
    if cond.type == "unary_expression" and _txt(cond.child_by_field_name("operator")) == "!":
        inner = _remainder_test(cond.child_by_field_name("argument"), a, b)
        return None if inner is None else not inner
    mod = _binary(cond, "%")
    if mod is not None:
        return True if _same(mod[0], a) and _same(mod[2], b) else None
    cmp = _binary(cond, "!=", "==", ">")
    if cmp is None:
        return None
    left, op, right = cmp
    if _int(left) == 0 and op in ("!=", "=="):
        left, right = right, left
    if _int(right) != 0 or _remainder_test(left, a, b) is not True:
        return None
    return op in ("!=", ">")


def _correction(n: ts.Node | None, a: ts.Node, b: ts.Node) -> bool:
    """Whether ``n`` is 1 when ``a % b`` is not 0, else 0."""
    n = _bare(n)
    if n is None:
        return False
    if n.type == "conditional_expression":
        test = _remainder_test(n.child_by_field_name("condition"), a, b)
        yes = _int(n.child_by_field_name("consequence"))
        no = _int(n.child_by_field_name("alternative"))
        if test is None or {yes, no} != {0, 1}:
            return False
        return (yes == 1) == test
    if n.type == "unary_expression" and _txt(n.child_by_field_name("operator")) == "!":
        inner = _bare(n.child_by_field_name("argument"))
        return (
            inner is not None
            and inner.type == "unary_expression"
            and _txt(inner.child_by_field_name("operator")) == "!"
            and _remainder_test(inner.child_by_field_name("argument"), a, b) is True
        )
    return _binary(n, "!=", ">", "==") is not None and _remainder_test(n, a, b) is True


def remainder_ceil(n: ts.Node) -> tuple[ts.Node, ts.Node] | None:
    """``(a, b)`` when ``n`` is ``a / b`` plus a remainder correction (either order)."""
    plus = _binary(n, "+")
    if plus is None:
        return None
    left, _, right = plus
    for div, corr in ((left, right), (right, left)):
        parts = _binary(div, "/")
        if parts is not None and _correction(corr, parts[0], parts[2]):
            return parts[0], parts[2]
    return None


def half_round(n: ts.Node) -> tuple[ts.Node, ts.Node] | None:
    """``(a, b)`` when ``n`` is ``a / b + 0.5`` (either order): a ratio rounded to the nearest
    integer, halves up, once the caller converts it to an integer."""
    plus = _binary(n, "+")
    if plus is None:
        return None
    left, _, right = plus
    for div, half in ((left, right), (right, left)):
        parts = _binary(div, "/")
        b = _bare(half)
        if parts is not None and b is not None and b.type == "number_literal":
            if _txt(b).rstrip("fF") in ("0.5", ".5", "0.50"):
                return parts[0], parts[2]
    return None


def _increments(stmt: ts.Node | None, name: str) -> bool:
    """Whether ``stmt`` (a statement or a block of one) adds 1 to ``name``."""
    if stmt is not None and stmt.type == "compound_statement":
        inner = _kids(stmt)
        stmt = inner[0] if len(inner) == 1 else None
    if stmt is None or stmt.type != "expression_statement" or not _kids(stmt):
        return False
    e = _bare(_kids(stmt)[0])
    if e is None:
        return False
    if e.type == "update_expression":
        return _txt(e) in (f"{name}++", f"++{name}")
    if e.type != "assignment_expression" or _txt(e.child_by_field_name("left")) != name:
        return False
    op, right = _txt(e.child_by_field_name("operator")), e.child_by_field_name("right")
    if op == "+=":
        return _int(right) == 1
    plus = _binary(right, "+") if op == "=" else None
    if plus is None:
        return False
    return {_txt(plus[0]), _txt(plus[2])} == {name, "1"}


def rounded_up_after(
    fn: ts.Node, name: str, value: ts.Node, before: int
) -> tuple[ts.Node, ts.Node] | None:
    """``(a, b)`` when ``value`` (assigned to ``name``) is ``a / b`` and an ``if`` after it in
    ``fn``, before byte ``before``, adds 1 to ``name`` when ``a % b`` is not 0."""
    parts = _binary(value, "/")
    if parts is None:
        return None
    a, _, b = parts
    stack = [fn.child_by_field_name("body")]
    while stack:
        n = stack.pop()
        if n is None or n.end_byte <= value.end_byte or n.start_byte >= before:
            continue
        if n.type == "if_statement" and n.child_by_field_name("alternative") is None:
            cond = n.child_by_field_name("condition")
            cond_kids = _kids(cond) if cond is not None else []
            test = _remainder_test(cond_kids[0] if len(cond_kids) == 1 else cond, a, b)
            if test is True and _increments(n.child_by_field_name("consequence"), name):
                return a, b
        stack.extend(n.children)
    return None


def member_assignments(fn: ts.Node, name: str, after: int, before: int) -> dict[str, ts.Node]:
    """The last value assigned to each of ``name.x``, ``name.y``, ``name.z`` in ``fn`` between
    bytes ``after`` and ``before``."""
    found: dict[str, ts.Node] = {}
    stack = [fn.child_by_field_name("body")]
    while stack:
        n = stack.pop()
        if n is None or n.end_byte <= after or n.start_byte >= before:
            continue
        if n.type == "assignment_expression" and _txt(n.child_by_field_name("operator")) == "=":
            left = n.child_by_field_name("left")
            if left is not None and left.type == "field_expression":
                base = _txt(left.child_by_field_name("argument"))
                field = _txt(left.child_by_field_name("field"))
                if base == name and field in ("x", "y", "z"):
                    prev = found.get(field)
                    if prev is None or n.start_byte > prev.start_byte:
                        found[field] = n.child_by_field_name("right")
        stack.extend(n.children)
    return found


def _named_defs(root: ts.Node, types: tuple[str, ...]) -> list[ts.Node]:
    out: list[ts.Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type in types:
            out.append(n)
        if n.type not in ("function_definition", "compound_statement"):
            stack.extend(n.children)
    return out


def type_alias(root: ts.Node, name: str) -> ts.Node | None:
    """The type ``name`` stands for, from ``typedef T name;`` or ``using name = T;`` at file or
    namespace scope (the last one in the file: the branch the preprocessor kept)."""
    found = None
    for d in _named_defs(root, ("type_definition", "alias_declaration")):
        if d.type == "type_definition":
            decls = d.children_by_field_name("declarator")
            if any(_txt(x) == name for x in decls):
                found = d.child_by_field_name("type")
        elif _txt(d.child_by_field_name("name")) == name:
            desc = d.child_by_field_name("type")
            found = desc.child_by_field_name("type") if desc is not None else None
    return found


def static_member(root: ts.Node, struct: str, member: str) -> tuple[ts.Node, dict[str, str]] | None:
    """The initializer of ``static constexpr ... member = e;`` in struct (or class) ``struct``,
    and the names of its template parameters mapped to the template arguments ``{}`` (filled by
    the caller), or None."""
    for spec in _named_defs(root, ("struct_specifier", "class_specifier")):
        if _txt(spec.child_by_field_name("name")) != struct:
            continue
        body = spec.child_by_field_name("body")
        for field in _kids(body) if body is not None else []:
            if field.type != "field_declaration" or "static" not in _txt(field)[:40]:
                continue
            for d in field.children_by_field_name("declarator"):
                if _txt(d) == member:
                    value = field.child_by_field_name("default_value")
                    if value is not None:
                        return value, template_params(spec)
                if (
                    d.type == "init_declarator"
                    and _txt(d.child_by_field_name("declarator")) == member
                ):
                    return d.child_by_field_name("value"), template_params(spec)
    return None


def template_params(spec: ts.Node) -> dict[str, str]:
    """The type parameters of the template declaring ``spec`` (in order), each mapped to ''."""
    parent = spec.parent
    while parent is not None and parent.type not in ("template_declaration", "translation_unit"):
        parent = parent.parent
    if parent is None or parent.type != "template_declaration":
        return {}
    plist = parent.child_by_field_name("parameters")
    out: dict[str, str] = {}
    for p in _kids(plist) if plist is not None else []:
        if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
            name = p.child_by_field_name("name") or (_kids(p)[0] if _kids(p) else None)
            if name is not None:
                out[_txt(name)] = ""
    return out


#: occupancy queries that write (minimum grid size, block size) through their first two arguments
OCCUPANCY_CALLS = frozenset(
    {"cudaOccupancyMaxPotentialBlockSize", "cudaOccupancyMaxPotentialBlockSizeVariableSMem"}
)


def occupancy_output(fn: ts.Node, name: str, after: int, before: int) -> int | None:
    """0 when ``&name`` receives the minimum grid size of an occupancy query in ``fn`` between
    bytes ``after`` and ``before``, 1 when it receives the block size, else None."""
    stack = [fn.child_by_field_name("body")]
    while stack:
        n = stack.pop()
        if n is None or n.end_byte <= after or n.start_byte >= before:
            continue
        if n.type == "call_expression":
            callee = _txt(n.child_by_field_name("function")).split("::")[-1].split("<")[0]
            args = n.child_by_field_name("arguments")
            items = _kids(args) if args is not None else []
            if callee in OCCUPANCY_CALLS:
                for i, a in enumerate(items[:2]):
                    if _txt(a) == f"&{name}":
                        return i
        stack.extend(n.children)
    return None
