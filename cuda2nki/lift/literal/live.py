"""Known store masks that depend on the threads an early return cleared.

A literal store passes the trace-time array of its active threads (``known=``) when the lowering
knows it exactly, so that a block whose threads all store writes without reading the old
elements back.  After ``if (i >= n) return;`` the active threads are ``_live``, which the
lowering mirrors in the trace-time array ``_klive`` while every return clears threads by a
condition known at trace time.  One return under a condition on data breaks the mirror; since
the stores that used it may run after that return (in a later loop iteration), every
``known=`` made from ``_klive`` is then dropped: those stores keep their read-modify-write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cuda2nki.lift.literal.program import Branch, Instr, Loop, Node


def drop_known(nodes: Iterable[Node], names: set[str]) -> list[Node]:
    """``nodes`` without the ``known=`` of stores whose known mask is one of ``names``."""
    return [_drop(n, names) for n in nodes]


def _drop(n: Node, names: set[str]) -> Node:
    if isinstance(n, Branch):
        return Branch(n.cond, tuple(drop_known(n.then, names)), tuple(drop_known(n.else_, names)),
                      n.line)  # fmt: skip
    if isinstance(n, Loop):
        return Loop(n.kind, n.header, tuple(drop_known(n.body, names)), n.line)
    ops = dict(n.operands)
    if n.kind == "store" and ops.get("known") in names:
        return Instr(n.kind, tuple((k, v) for k, v in n.operands if k != "known"), n.line)
    if n.kind == "call":
        expr = ops["expr"]
        for name in names:
            expr = re.sub(rf", known={re.escape(name)}\)$", ")", expr)
        if expr != ops["expr"]:
            return Instr("call", (("expr", expr),), n.line)
    return n
