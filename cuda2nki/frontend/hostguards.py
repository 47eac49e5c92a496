"""Host values fixed by the ``if`` around a launch: ``if (block_size == 16) k<16><<<g, t>>>(...)``.

A host often picks a template instantiation by testing the size it launches with::

    dim3 threads(block_size, block_size);
    if (block_size == 16) matrixMul<16><<<grid, threads>>>(...);
    else                  matrixMul<32><<<grid, threads>>>(...);

Where the launch runs, the test holds: ``block_size`` is 16 there, whatever value the evaluator
would read for it elsewhere.  Without this, the ``<16>`` instance was given the other arm's 32 x
32 block, and its 16 x 16 shared tiles were written out of bounds by the check's CUDA run.  The
host evaluator (:mod:`cuda2nki.frontend.hostvals`) takes these equalities as the names' values
in the launch's function.  Only ``name == constant`` (either order, inside ``&&`` chains and
parentheses) on the arm that holds the launch counts; an ``else`` arm fixes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts


@dataclass(frozen=True)
class Equality:
    """``name`` equals the literal ``value`` (its source text) where the launch runs; ``test``:
    the ``if`` statement that says so."""

    name: str
    value: str
    test: ts.Node


def launch_equalities(call: ts.Node, fnode: ts.Node | None) -> list[Equality]:
    """The equalities of the ``if`` statements whose taken arm holds ``call``, innermost first
    (a name tested twice keeps the innermost test)."""
    out: list[Equality] = []
    seen: set[str] = set()
    child, n = call, call.parent
    while (
        n is not None and n != fnode and n.type not in ("function_definition", "lambda_expression")
    ):
        if n.type == "if_statement" and _same(n.child_by_field_name("consequence"), child):
            cond = n.child_by_field_name("condition")
            for name, value in _equalities(cond):
                if name not in seen:
                    seen.add(name)
                    out.append(Equality(name, value, n))
        child, n = n, n.parent
    return out


def _same(a: ts.Node | None, b: ts.Node) -> bool:
    return a is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte


def _equalities(cond: ts.Node | None) -> list[tuple[str, str]]:
    if cond is None:
        return []
    if cond.type in ("condition_clause", "parenthesized_expression"):
        inner = cond.child_by_field_name("value")
        if inner is None:
            inner = next((c for c in cond.named_children if c.type != "comment"), None)
        return _equalities(inner)
    if cond.type != "binary_expression":
        return []
    op = cond.child_by_field_name("operator")
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if op is None or left is None or right is None:
        return []
    if op.type == "&&":
        return _equalities(left) + _equalities(right)
    if op.type != "==":
        return []
    for a, b in ((left, right), (right, left)):
        a, b = _unwrapped(a), _unwrapped(b)
        if a.type == "identifier" and b.type == "number_literal":
            return [((a.text or b"").decode(), (b.text or b"").decode())]
    return []


def _unwrapped(n: ts.Node) -> ts.Node:
    while n.type == "parenthesized_expression" and n.named_child_count == 1:
        n = n.named_children[0]
    return n
