"""``atomicExch`` whose old value is unused, as a store (literal lowering).

Atomics serialise per address; after ``atomicExch(p, v)`` by several threads the element holds
the value of the thread serialised last, and the SIMT interpreter serialises in thread order.
A plain store of the literal lowering leaves the same value (the last active thread in thread
order wins, at affine, index and data addresses alike), so the exchange is spelled as
``*p = v``.  An exchange whose old value is used (a lock, a linked-list push) is refused.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A


def exchange_store(call: A.Call) -> A.Assign | None:
    """``*p = v`` for ``atomicExch(p, v)`` (two arguments, a pointer first), else None."""
    if call.func != "atomicExch" or len(call.args) != 2:
        return None
    ptr, value = call.args
    pointee = ptr.ty.pointee if isinstance(ptr.ty, A.PointerType) else None
    target = A.Unary(loc=call.loc, op="*", operand=ptr, ty=pointee)
    return A.Assign(loc=call.loc, op="=", target=target, value=value, ty=pointee)


def atomic_refusal(func: str, ported: bool) -> str:
    """Why the literal lowering refuses the atomic call ``func`` where its value is used (or,
    for one it never ports, at all)."""
    if func == "atomicExch":
        return ("whose old value is used (each thread would receive the value of the thread "
                "serialised before it: a lock or a list push has no lockstep form)")  # fmt: skip
    if ported:
        return ("whose old value is used (each thread would receive the extremum of the "
                "values of the threads serialised before it; of the atomics whose old value "
                "is used, only atomicAdd/atomicSub on 32-bit integers are ported)")  # fmt: skip
    return "(an atomic read-modify-write the literal lowering does not port)"
