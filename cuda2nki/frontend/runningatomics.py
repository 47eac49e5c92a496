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
    return pointer_root(call.args[0]) if call.args else None


def counter_params(tu: A.TranslationUnit | None, fn: A.Function) -> set[str]:
    """The names under ``fn`` (its parameters and locals) that a running atomic updates an
    element of, directly or through the device functions ``fn`` calls: a helper that takes a
    counter pointer parameter and takes slots from it (``int slot(int* c) { return
    atomicAdd(c, 1); }``, several levels deep) makes the pointer its caller passes (``c``,
    ``&c[0]``, ``c + 0``) a counter too."""
    return _counters(tu, fn, (fn.name,), {})


def _counters(
    tu: A.TranslationUnit | None,
    fn: A.Function,
    stack: tuple[str, ...],
    memo: dict[str, set[str]],
) -> set[str]:
    """:func:`counter_params` of ``fn``; ``stack`` the functions being analysed (a recursive
    call adds nothing), ``memo`` each helper's answer."""
    out = {counter_name(c) for c in running_atomics(fn.body)}
    for n in walk(fn.body) if tu is not None else ():
        if not isinstance(n, A.Call) or n.target is None or n.target in stack:
            continue
        callee = tu.function(n.target)  # type: ignore[union-attr]
        if callee is None or callee.kind == "global":
            continue
        if callee.name not in memo:
            memo[callee.name] = _counters(tu, callee, (*stack, callee.name), memo)
        for p, arg in zip(callee.params, n.args):
            if p.name in memo[callee.name]:
                out.add(pointer_root(arg))
    return out - {None}  # type: ignore[return-value]


def pointer_root(e: A.Expr) -> str | None:
    """The named pointer ``e`` points into (``&c[0]``, ``c``, ``c + k``, casts), None when it
    is not one named pointer."""
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
