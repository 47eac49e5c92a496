"""What a loop whose trip count depends on data reads, and what it lacks to be a trace-time loop.

A loop whose condition differs between threads runs, in a lockstep port, until no thread
satisfies it; that is a trace-time loop only when the condition is affine in the thread or a
counter bounds it (:mod:`.bound`).  Otherwise the current API runs it as a runtime loop
(:mod:`.dataloop`), whose port says what its condition reads; the legacy API has no runtime
loop, and its refusal also names the bound that would make the loop portable.
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.bound import nodes

LEGACY = (
    "a loop whose trip count depends on data: the legacy API has no runtime loop "
    "(nl.while_loop); a conjunct 'k < K' in its condition, with a counter k that starts at a "
    "constant and steps by one once per iteration and a uniform K, would bound it"
)


def data_loop_text(kind: str, cond: A.Expr, per_thread: Callable[[str], bool]) -> str:
    """What a ``kind`` loop (``a loop``, ``a do-while loop``) with condition ``cond`` is and
    reads; ``per_thread(name)`` says whether local ``name`` holds per-thread data."""
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
    return f"{kind} whose trip count depends on data{source}"
