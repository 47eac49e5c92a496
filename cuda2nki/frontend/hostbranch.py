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
