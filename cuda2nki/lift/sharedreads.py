"""Global reads that only reach shared memory: ``conv[t] = con[base + t]`` before a tree
reduction whose result the executed thread's stores hold only as an opaque value.

The accesses binding inference sizes a pointer by are the loads inside what the executed thread
stores to global memory.  A pointer read only into shared memory, whose values come back out
through a reduction the executor does not follow element by element, left no access there, so
neither its shape nor its rows could be inferred (a gather of whole blocks by an index list:
``con[list[b] * 64 + t]``).  Its loads are in the shared-memory writes: a pointer that has no
access otherwise takes them (its role is ``in``: a read), but only where its index expressions
give it no shape either: a tiled matrix product's operands staged through shared memory keep
the row-major shape their index expressions show (``P[row * inner + k]``: ``[rows, inner]``).
"""

from __future__ import annotations

from collections.abc import Callable


def shared_reads(prog, accesses: dict, loads_in: Callable) -> dict[str, list]:  # noqa: ANN001
    """The loads of the kernel's pointers inside ``prog``'s shared-memory writes, for the
    pointers that have no access in ``accesses``."""
    found: dict[str, list] = {}
    for arr in prog.shared.values():
        for w in arr.writes:
            for ld, folds in loads_in(w.value, ()):
                if ld.tensor in prog.tensors and not accesses.get(ld.tensor):
                    found.setdefault(ld.tensor, []).append(
                        ("r", ld.index, w.guard, tuple(w.loops) + folds)
                    )
    return found


def unsized_shared_reads(
    found: dict[str, list], shapes: dict, accesses: dict, shape_of: Callable[[list], list | None]
) -> None:
    """Give each pointer of ``found`` that is still without a shape its shared-memory reads as
    accesses (in ``accesses``) and the shape they give (in ``shapes``)."""
    for name, acc in found.items():
        if shapes.get(name) is None and not accesses.get(name):
            accesses[name] = acc
            shapes[name] = shape_of(acc)
