"""What a loop whose trip count depends on data lacks (literal lowering refusals).

A loop whose condition differs between threads runs, in a lockstep port, until no thread
satisfies it; that is a trace-time loop only when the condition is affine in the thread or a
counter bounds it (:mod:`.bound`).  Otherwise the port cannot know how many iterations to
emit, and the refusal names the per-thread values the condition reads and the bound that would
make the loop portable.
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.bound import nodes

_HINT = (
    "no conjunct 'k < K' bounds it, with a counter k that starts at a constant and steps by one "
    "once per iteration and a uniform K"
)


def unbounded_reason(kind: str, cond: A.Expr, per_thread: Callable[[str], bool]) -> str:
    """The refusal of a ``kind`` loop (``a loop``, ``a do-while loop``) with condition
    ``cond``; ``per_thread(name)`` says whether local ``name`` holds per-thread data."""
    names: list[str] = []
    reads = False
    for n in nodes(cond):
        if isinstance(n, A.Name) and n.name not in names and per_thread(n.name):
            names.append(n.name)
        elif isinstance(n, A.Index) or (isinstance(n, A.Unary) and n.op == "*"):
            reads = True
    data = [x for x in names if not x.startswith("__c2n_")]
    parts = [f"the per-thread {', '.join(repr(x) for x in data)}"] if data else []
    if reads:
        parts.append("memory")
    if any(x.startswith("__c2n_brk") for x in names):
        parts.append("the flag of a break taken under a per-thread condition")
    source = f" (its condition reads {' and '.join(parts)})" if parts else ""
    return f"{kind} whose trip count depends on data{source}: {_HINT}"
