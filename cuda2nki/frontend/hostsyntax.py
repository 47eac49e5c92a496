"""Host syntax helpers of the evaluator: a node's text and children, the function around a
node, parameter names, the last declaration / first assignment of a local before a point, and
the ``@i`` placeholders of kernel arguments in a host value's text."""

from __future__ import annotations

import re

import tree_sitter as ts

from cuda2nki.frontend import declindex
from cuda2nki.frontend.cst import COMMENT_IDS
from cuda2nki.frontend.hostvalue import _number


def _txt(n: ts.Node | None) -> str:
    return (n.text or b"").decode() if n is not None else ""


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def _enclosing(n: ts.Node) -> ts.Node | None:
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p


def _function_name(fn: ts.Node) -> str | None:
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type not in (
        "identifier",
        "field_identifier",
        "qualified_identifier",
    ):
        if d.type == "template_function":
            d = d.child_by_field_name("name")
            continue
        d = d.child_by_field_name("declarator")
    return _txt(d).split("::")[-1] if d is not None else None


def _declared_count(decl: ts.Node, name: str, value: ts.Node | None) -> int | None:
    """The item count of array ``name`` declared by ``decl``: its initializer list's length,
    else the number literal between its brackets."""
    if value is not None and value.type == "initializer_list":
        return len(_kids(value))
    for d in decl.children_by_field_name("declarator"):
        d = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        if d is None or d.type != "array_declarator":
            continue
        if _txt(d.child_by_field_name("declarator")) != name:
            continue
        size = d.child_by_field_name("size")
        if size is not None and size.type == "number_literal":
            got = _number(_txt(size))
            return got if isinstance(got, int) else None
    return None


_LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "update_expression"})


def _straight_line(fn: ts.Node) -> bool:
    """``fn`` has no loop, no ``++``/``--`` and no compound assignment (``r += 4``): its locals
    keep the value they are declared or assigned with."""
    for n in _walk_type(fn, None):
        if n.type in _LOOPS:
            return False
        if n.type == "assignment_expression" and _txt(n.child_by_field_name("operator")) != "=":
            return False
    return True


def _walk_type(root: ts.Node, kind: str | None) -> list[ts.Node]:
    """The nodes of type ``kind`` (all nodes for None) under ``root``, in source order."""
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if kind is None or n.type == kind:
            out.append(n)
        stack.extend(reversed(n.children))
    return out


def _bare_name(n: ts.Node) -> str | None:
    """The function ``n`` names when passed as a pointer: ``f``, ``&f``, ``(void*)f``."""
    while n.type in ("cast_expression", "parenthesized_expression", "pointer_expression"):
        if n.type == "pointer_expression" and _txt(n.child_by_field_name("operator")) != "&":
            return None
        inner = n.child_by_field_name("value") or n.child_by_field_name("argument")
        if inner is None:
            kids = _kids(n)
            inner = kids[0] if len(kids) == 1 else None
        if inner is None:
            return None
        n = inner
    return _txt(n) if n.type == "identifier" else None


def parameter_names(fn: ts.Node) -> list[str]:
    """The names of the parameters of function definition ``fn`` ('' for an unnamed one)."""
    return _params(fn)


def _params(fn: ts.Node) -> list[str]:
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    plist = d.child_by_field_name("parameters") if d is not None else None
    out = []
    for p in _kids(plist) if plist is not None else []:
        name = None
        q = p.child_by_field_name("declarator")
        while q is not None:
            if q.type == "identifier":
                name = _txt(q)
                break
            q = q.child_by_field_name("declarator") or (
                _kids(q)[-1]
                if q.type in ("reference_declarator", "parenthesized_declarator") and _kids(q)
                else None
            )
        out.append(name or "")
    return out


def _single_return(fn: ts.Node) -> ts.Node | None:
    body = fn.child_by_field_name("body")
    stmts = _kids(body) if body is not None else []
    if len(stmts) != 1 or stmts[0].type != "return_statement":
        return None
    kids = _kids(stmts[0])
    return kids[0] if kids else None


def _one_line(n: ts.Node) -> str:
    text = " ".join(_txt(n).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _declared_name(d: ts.Node) -> tuple[str | None, ts.Node | None, bool]:
    """(name, initial value, is an array) of one declarator."""
    value = None
    if d.type == "init_declarator":
        value = d.child_by_field_name("value")
        d = d.child_by_field_name("declarator")
    is_array = False
    if d is not None and d.type == "function_declarator":  # `dim3 block(n)`: most vexing parse
        plist = d.child_by_field_name("parameters")
        value = plist
        d = d.child_by_field_name("declarator")
    while d is not None and d.type in (
        "array_declarator",
        "pointer_declarator",
        "reference_declarator",
    ):
        is_array = is_array or d.type == "array_declarator"
        inner = d.child_by_field_name("declarator")
        d = inner if inner is not None else (_kids(d)[-1] if _kids(d) else None)
    if d is None or d.type != "identifier":
        return None, None, is_array
    return _txt(d), value, is_array


def _last_decl(
    scope: ts.Node | None, name: str, before: int, top: bool = False
) -> tuple[str, ts.Node, ts.Node | None] | None:
    """The last declaration of ``name`` in ``scope`` before byte ``before``: (kind, declaration,
    initial value); kind is ``loop`` for a for-loop's variable."""
    if scope is None:
        return None
    best = None
    best_start = -1
    for start, got, kind, n, value in declindex.declarations(scope, top, _declared_name):
        if got == name and start < before and start > best_start:
            best, best_start = (kind, n, value), start
    return best


def declarator_start(decl: ts.Node, value: ts.Node | None) -> int:
    """Where the declarator of ``decl`` that holds ``value`` begins: the point at which its value
    is evaluated, after the declaration's earlier declarators (``int a = n, b = a * 2;``) and
    before its own name is in scope; the declaration's start when there is no value."""
    n = value
    while n is not None and n.parent is not None and n.parent != decl:
        n = n.parent
    return n.start_byte if n is not None and n.parent == decl else decl.start_byte


def _first_assignment(fn: ts.Node, name: str, after: int, before: int) -> ts.Node | None:
    best = None
    for start, end, left, right in declindex.assignments(fn, _txt):
        if left == name and end > after and start < before and (best is None or start < best[0]):
            best = (start, right)
    return best[1] if best is not None else None


def _declares(fn: ts.Node, name: str) -> bool:
    """Whether ``fn`` has a parameter or local named ``name`` (which hides a file-scope one)."""
    return name in _params(fn) or _last_decl(fn, name, fn.end_byte) is not None


def resolve_args(text: str | None, args: tuple[str, ...]) -> str | None:
    """``@i`` placeholders (kernel argument positions) in ``text`` replaced by parameter names."""
    if text is None:
        return None

    def one(m: re.Match) -> str:
        return args[int(m.group(1))]

    return re.sub(r"@(\d+)", one, text)


def stored_value(n: ts.Node, name: str, names=None) -> ts.Node | None:
    """The value the declarator or plain assignment ``n`` stores in ``name`` (``T* name = v``,
    ``name = v``); ``names(left, name)`` says whether an assignment's left side is ``name``
    (default: the bare identifier).  None for anything else, compound assignments included."""
    if n.type == "init_declarator":
        got, value, _ = _declared_name(n)
        return value if got == name else None
    if n.type != "assignment_expression":
        return None
    op, left = n.child_by_field_name("operator"), n.child_by_field_name("left")
    if op is not None and op.text != b"=":
        return None
    if left is None:
        return None
    if names is not None:
        if not names(left, name):
            return None
    elif left.type != "identifier" or left.text != name.encode():
        return None
    return n.child_by_field_name("right")
