"""``atomicAdd``/``atomicSub`` calls whose old value a kernel uses: slot counters, queue pushes,
stream compactions (each thread receives a running total over the threads serialised before
it).  The SIMT interpreter fixes their order (:mod:`cuda2nki.simt.atomicorder`) and binding
inference starts their counters where the host does (:mod:`cuda2nki.lift.zerocounters`)."""

from __future__ import annotations

from collections.abc import Iterator

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

#: the atomics whose old value is a running total
RUNNING = frozenset(
    f"{name}{suffix}" for name in ("atomicAdd", "atomicSub") for suffix in ("", "_block", "_system")
)


def _discarded(body: object) -> set[int]:
    """The ids of the calls that are a whole expression statement (their value unused)."""
    out: set[int] = set()
    for n in walk(body):
        if isinstance(n, A.ExprStmt):
            e = n.expr
            while isinstance(e, A.Cast):  # ``(void)atomicAdd(...)``
                e = e.operand
            if isinstance(e, A.Call):
                out.add(id(e))
    return out


def running_atomics(body: object) -> Iterator[A.Call]:
    """The ``atomicAdd``/``atomicSub`` calls under ``body`` whose value is used."""
    dropped = _discarded(body)
    for n in walk(body):
        if isinstance(n, A.Call) and n.func in RUNNING and id(n) not in dropped:
            yield n


def counter_name(call: A.Call) -> str | None:
    """The pointer variable the atomic ``call`` updates an element of (``&c[0]``, ``c``,
    ``c + k``), None when it is not one named pointer."""
    if not call.args:
        return None
    e = call.args[0]
    while True:
        if isinstance(e, A.Cast):
            e = e.operand
        elif isinstance(e, A.Unary) and e.op == "&":
            e = e.operand
        elif isinstance(e, A.Index):
            e = e.base
        elif isinstance(e, A.Binary) and e.op in ("+", "-"):
            e = e.left
        else:
            break
    return e.name if isinstance(e, A.Name) else None
