"""Names for the block sizes a contraction's port chooses from the problem size.

A blocked matmul binds sizes such as ``min(128 * ((M + 127) // 128), <what SBUF holds>)`` once at
the top of the kernel.  They read best named after the dimension they block, as the tutorials do:
``M_block`` for a block of ``M`` rows, ``N_block`` for a block of ``N`` columns, and
``N_block_n = min(N_block, N)`` for the part of that block the problem fills (the ``_n`` suffix
the ragged tile sizes carry too).  The dimension is the one the ``min``'s first argument rounds
(the second one's where the first names none): the other bounds what the on-chip memory holds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from cuda2nki.ir.nodes import Matmul, Min, SizeExpr, Sym

#: the name a size gets when it blocks no single dimension
FALLBACK = "f_size"


def blocked_dim(e: SizeExpr, scalars: set[str], dims: Mapping[SizeExpr, str]) -> str | None:
    """The kernel dimension the size ``e`` blocks, or None.  ``dims`` holds the dimensions of
    sizes named before (a ``min(N_block, N)`` blocks ``N`` as ``N_block`` does)."""
    if not isinstance(e, Min):
        return None
    for arg in (e.a, e.b):
        found = _arg_dim(arg, scalars, dims)
        if found is not None:
            return found
    return None


def _arg_dim(arg: SizeExpr, scalars: set[str], dims: Mapping[SizeExpr, str]) -> str | None:
    if arg in dims:
        return dims[arg]
    if isinstance(arg, Sym):
        return arg.name if arg.name in scalars else None
    free = arg.free_syms() & scalars
    return next(iter(free)) if len(free) == 1 else None


def block_name(dim: str | None, taken: set[str]) -> str:
    """A fresh name for a block of ``dim`` (``M_block``, then ``M_block_n``, ``M_block_n1`` ...)."""
    return next(n for n in _candidates(dim) if n not in taken)


def _candidates(dim: str | None) -> Iterator[str]:
    if dim is None:
        yield FALLBACK
        k = 1
        while True:
            yield f"{FALLBACK}{k}"
            k += 1
    yield f"{dim}_block"
    yield f"{dim}_block_n"
    k = 1
    while True:
        yield f"{dim}_block_n{k}"
        k += 1


def has_matmul(node: object) -> bool:
    """Whether a scheduled body holds a tensor-engine matmul anywhere (loops and branches)."""
    if isinstance(node, Matmul):
        return True
    if isinstance(node, tuple | list):
        return any(has_matmul(x) for x in node)
    if isinstance(node, SizeExpr) or not hasattr(node, "__dataclass_fields__"):
        return False
    return any(
        has_matmul(getattr(node, f))
        for f in node.__dataclass_fields__
        if f != "loc" and isinstance(getattr(node, f), tuple | list)
    )
