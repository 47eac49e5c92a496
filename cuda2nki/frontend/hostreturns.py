"""The ``return`` a host helper with guarded returns reaches.

A helper that rounds a size often returns from one of two branches::

    size_t round_up(int group, int global) {
        int r = global % group;
        if (r == 0) { return global; } else { return global + group - r; }
    }

:func:`taken_return` walks the helper's body in order: a condition the caller can evaluate
(its arguments bound) picks the branch, and the first ``return`` reached is the one whose value
the call has.  Only helpers whose branches hold no declaration and no assignment qualify, so
that the locals the conditions and the returns read keep the one value they are declared or
assigned with before the branches (see :func:`cuda2nki.frontend.hostsyntax._straight_line`).
"""

from __future__ import annotations

from collections.abc import Callable

import tree_sitter as ts

#: statements walked past: they do not decide which ``return`` is reached
_PLAIN = frozenset({"declaration", "expression_statement", "comment", "empty_statement"})
#: nodes a branch may not hold (they would give a local another value on one path only)
_WRITES = frozenset({"declaration", "assignment_expression", "update_expression"})


def taken_return(fn: ts.Node, truth: Callable[[ts.Node], int | None]) -> ts.Node | None:
    """The ``return`` statement of the helper ``fn`` that a call reaches, ``truth(condition)``
    giving each ``if`` condition's value (None: unknown); None when it cannot be told."""
    body = fn.child_by_field_name("body")
    if body is None or not all(_plain_branches(i) for i in _ifs(body)):
        return None
    return _walk(_statements(body), truth)


def _walk(stmts: list[ts.Node], truth: Callable[[ts.Node], int | None]) -> ts.Node | None:
    for st in stmts:
        if st.type == "return_statement":
            return st
        if st.type == "if_statement":
            cond = st.child_by_field_name("condition")
            if cond is not None and cond.type == "condition_clause":
                cond = cond.child_by_field_name("value")
            value = truth(cond) if cond is not None else None
            if value is None:
                return None
            branch = st.child_by_field_name("consequence" if value else "alternative")
            if branch is not None and branch.type == "else_clause":
                branch = next(iter(branch.named_children), None)
            got = _walk(_statements(branch), truth) if branch is not None else None
            if got is not None:
                return got
            continue
        if st.type not in _PLAIN:
            return None
    return None


def _statements(n: ts.Node) -> list[ts.Node]:
    """The statements of a block (a lone statement: itself)."""
    if n.type == "compound_statement":
        return [c for c in n.named_children if c.type != "comment"]
    return [n]


def _ifs(body: ts.Node) -> list[ts.Node]:
    out, stack = [], [body]
    while stack:
        n = stack.pop()
        if n.type == "if_statement":
            out.append(n)
        stack.extend(n.children)
    return out


def _plain_branches(st: ts.Node) -> bool:
    """Whether the branches of the ``if`` statement ``st`` declare and assign nothing."""
    for field in ("consequence", "alternative"):
        branch = st.child_by_field_name(field)
        stack = [branch] if branch is not None else []
        while stack:
            n = stack.pop()
            if n.type in _WRITES:
                return False
            stack.extend(n.children)
    return True
