"""Which pointer parameters a kernel writes, to say why a kernel whose binding has no output
tensor gets no port: it may truly write nothing (device ``printf`` only), or it writes through a
parameter the binding has no output tensor for (its shape or role could not be inferred)."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_ATOMIC_PREFIX = "atomic"


def written_pointers(fn: A.Function) -> list[str]:
    """The pointer parameters of ``fn`` that its own body stores through (assignment, ``++``/
    ``--``, atomics), in parameter order."""
    params = {p.name for p in fn.params if isinstance(p.ty, A.PointerType)}
    found: set[str] = set()
    for n in walk(fn.body):
        if isinstance(n, A.Assign):
            found.add(_root(n.target) or "")
        elif isinstance(n, A.Unary) and ("++" in n.op or "--" in n.op):
            found.add(_root(n.operand) or "")
        elif isinstance(n, A.Call) and n.func.startswith(_ATOMIC_PREFIX) and n.args:
            found.add(_root(n.args[0]) or "")
    return [p.name for p in fn.params if p.name in params and p.name in found]


def _root(e: A.Expr) -> str | None:
    """The name a store target is addressed from, through indexing, dereference, ``&`` and
    member lanes; None for a local value."""
    while True:
        if isinstance(e, A.Index):
            e = e.base
        elif isinstance(e, A.Unary) and e.op in ("*", "&"):
            e = e.operand
        elif isinstance(e, A.Binary) and e.op in ("+", "-"):
            e = e.left if isinstance(e.left.ty, A.PointerType) else e.right
        elif isinstance(e, A.Name):
            return e.name
        else:
            return None


def no_output_reason(fn: A.Function | None, binding: object, default: str) -> str:
    """Why a kernel without an output tensor gets no port: ``default`` (it writes nothing), or
    the written parameters the binding does not make outputs."""
    if fn is None:
        return default
    roles = {
        getattr(t, "name", ""): getattr(t, "role", "in") for t in getattr(binding, "tensors", ())
    }
    missing = [p for p in written_pointers(fn) if roles.get(p) not in ("out", "inout")]
    if not missing:
        return default
    names = ", ".join(f"'{p}'" for p in missing)
    return (
        f"the kernel writes through {names} but the binding has no output tensor for it "
        f"(its shape or role could not be inferred; give `{missing[0]} = {{ shape = [...], "
        'role = "inout" }`)'
    )
