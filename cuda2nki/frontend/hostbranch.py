"""Host values chosen by a branch: ``if (n < 1024) threads = 128; else threads = 256;``.

The host evaluator (:mod:`cuda2nki.frontend.hostvals`) asks which assignment of a local
reaches a launch when the assignments sit in the arms of an ``if`` (``else if`` chains and
braces included).  These helpers read the syntax tree only: the ``if`` around an assignment,
the arms of that ``if`` and each arm's assignment of the name.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts


@dataclass(frozen=True)
class BranchArm:
    """One arm of a host ``if`` chain: its condition (None: the final ``else``) and the value
    it assigns to the name (None: the arm leaves the name alone)."""

    condition: ts.Node | None
    value: ts.Node | None


def enclosing_if(node: ts.Node, before: int) -> ts.Node | None:
    """The outermost ``if`` statement around ``node`` that ends before byte ``before`` (the
    launch): an ``if`` that also holds the launch decides nothing about the launch's value."""
    best = None
    n = node.parent
    while n is not None and n.type not in ("function_definition", "lambda_expression"):
        if n.type == "if_statement" and n.end_byte <= before:
            best = n
        n = n.parent
    return best


def arms(ifn: ts.Node, name: str) -> list[BranchArm]:
    """The arms of the ``if``/``else if``/``else`` chain ``ifn`` in source order."""
    out: list[BranchArm] = []
    cur: ts.Node | None = ifn
    while cur is not None and cur.type == "if_statement":
        cond = cur.child_by_field_name("condition")
        value = cond.child_by_field_name("value") if cond is not None else None
        out.append(BranchArm(value, assigned(cur.child_by_field_name("consequence"), name)))
        alt = cur.child_by_field_name("alternative")
        if alt is None:
            return out
        body = next((c for c in alt.named_children if c.type != "comment"), None)
        if body is not None and body.type == "if_statement":
            cur = body
            continue
        out.append(BranchArm(None, assigned(body, name)))
        return out
    return out


def assigned(stmt: ts.Node | None, name: str) -> ts.Node | None:
    """The value of the first plain ``name = value`` in ``stmt`` (outside nested functions)."""
    if stmt is None:
        return None
    stack = [stmt]
    best: ts.Node | None = None
    while stack:
        n = stack.pop()
        if n.type in ("lambda_expression", "function_definition"):
            continue
        if n.type == "assignment_expression":
            op = n.child_by_field_name("operator")
            left = n.child_by_field_name("left")
            if (
                op is not None
                and op.type == "="
                and left is not None
                and (left.text or b"").decode() == name
                and (best is None or n.start_byte < best.start_byte)
            ):
                best = n
        stack.extend(n.children)
    return best.child_by_field_name("right") if best is not None else None


def mentions(node: ts.Node, name: str) -> bool:
    """Does the identifier ``name`` occur in ``node``?"""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier" and (n.text or b"").decode() == name:
            return True
        stack.extend(n.children)
    return False


#: statements whose body may run zero, one or several times before what follows them
_CONDITIONAL = frozenset(
    {
        "if_statement",
        "for_statement",
        "for_range_loop",
        "while_statement",
        "do_statement",
        "switch_statement",
        "conditional_expression",
        "lambda_expression",
    }
)


def reaching_assignment(fn: ts.Node, name: str, after: int, before: int) -> ts.Node | None:
    """The value of the last plain ``name = v`` between bytes ``after`` and ``before`` (the use)
    when it runs unconditionally on the way there: no ``if``, loop or ``switch`` around it that
    closes before the use.  A variable assigned again and again (``threads = dim3(16, 16);``
    before one launch, ``threads = dim3(32, 8);`` before the next) has, at each use, the value
    of its latest assignment.  None when that assignment is conditional (see
    :func:`enclosing_if`) or there is none."""
    from cuda2nki.frontend import declindex

    last = None
    text = lambda n: (n.text or b"").decode() if n is not None else ""  # noqa: E731
    for start, end, left, right in declindex.assignments(fn, text):
        if left == name and start > after and end <= before and (last is None or start > last[0]):
            last = (start, right)
    if last is None or last[1] is None:
        return None
    n = last[1].parent
    while n is not None and n != fn:
        if n.type in _CONDITIONAL and n.end_byte <= before:
            return None
        n = n.parent
    return last[1]
