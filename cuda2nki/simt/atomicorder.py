"""The order in which the interpreter serialises atomics whose old value a kernel uses.

Inside one chunk of blocks the interpreter runs each statement for every active thread of the
chunk before the next statement (blocks in launch order, then the linear thread id), and the
chunks run one after another.  An atomic's old value then depends on how many blocks a chunk
holds whenever a thread executes it more than once (a loop) or the kernel has several of them:
with the whole grid in one chunk, iteration 1 of every block comes before iteration 2 of block 0.

A kernel that uses the old value of an ``atomicAdd``/``atomicSub`` (a slot counter, a queue
push, a stream compaction) in a loop, beside any other atomic (which may update the same
element between two blocks' executions), or inside a device function, therefore runs one block
per chunk: each block runs to completion before the next starts, in
launch order, and inside a block every execution of the atomic serialises its active threads by
linear thread id (``threadIdx.x`` fastest, then ``y``, ``z``), executions in program order.  A
kernel whose only atomic is one such call, outside any loop, executes it at most once per
thread, and every chunking gives that same order (blocks in launch order, threads by linear id), so it keeps its
chunks.  That is one legal CUDA schedule, independent of the chunk size, and the one the
literal port reproduces (its blocks run one after another, each in lockstep), so ``check``
compares a port with the same execution.  The same holds for every other atomic whose old value
is used (max, min, exchange, compare-and-swap...) and for those whose outcome depends on the
order even unused (compare-and-swap, atomicInc/atomicDec, which wrap).  A kernel with a grid barrier keeps the whole grid in
one chunk (the barrier needs it).
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_LOOPS = (A.For, A.While, A.DoWhile)


def _in_loops(body: object) -> set[int]:
    """The ids of the nodes inside a loop of ``body``."""
    return {id(n) for loop in walk(body) if isinstance(loop, _LOOPS) for n in walk(loop)}


def _atomics(body: object) -> list[A.Call]:
    return [n for n in walk(body) if isinstance(n, A.Call) and n.func.startswith("atomic")]


def _callees(tu: A.TranslationUnit, fn: A.Function) -> list[A.Function]:
    """The device functions ``fn`` calls, transitively (each once)."""
    seen: set[str] = {fn.name}
    todo, out = [fn], []
    while todo:
        for n in walk(todo.pop().body):
            if isinstance(n, A.Call) and n.target is not None and n.target not in seen:
                seen.add(n.target)
                callee = tu.function(n.target)
                if callee is not None:
                    out.append(callee)
                    todo.append(callee)
    return out


#: atomics whose outcome depends on the order of the threads even where their value is unused
_ORDERED = frozenset(
    f"atomic{k}{scope}" for k in ("CAS", "Inc", "Dec") for scope in ("", "_block", "_system")
)


def _ordered_atomics(body: object) -> list[A.Call]:
    """The atomics under ``body`` whose old value is used or whose outcome depends on the
    order of the threads (compare-and-swap, wrapping increments)."""
    kept = _kept_values(body)
    return [n for n in _atomics(body) if id(n) in kept or n.func in _ORDERED]


def _kept_values(body: object) -> set[int]:
    """The ids of the atomic calls whose value is used (not a whole expression statement)."""
    dropped: set[int] = set()
    for n in walk(body):
        if isinstance(n, A.ExprStmt):
            e = n.expr
            while isinstance(e, A.Cast):
                e = e.operand
            dropped.add(id(e))
    return {id(n) for n in _atomics(body) if id(n) not in dropped}


def uses_running_atomic(tu: A.TranslationUnit, fn: A.Function) -> bool:
    """Does the order of ``fn``'s atomics whose old value is used (or whose outcome depends on
    the order, see :data:`_ORDERED`) depend on the chunk size (one in a loop, one beside any
    other atomic, or one in a device function it calls)?"""
    callees = _callees(tu, fn)
    if any(True for g in callees for _ in _ordered_atomics(g.body)):
        return True
    sites = _ordered_atomics(fn.body)
    if not sites:
        return False
    if len(_atomics(fn.body)) > 1 or any(_atomics(g.body) for g in callees):
        return True
    return id(sites[0]) in _in_loops(fn.body)
