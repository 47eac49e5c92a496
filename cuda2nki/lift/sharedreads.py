"""Global reads that only reach shared memory: ``conv[t] = con[base + t]`` before a tree
reduction whose result the executed thread's stores hold only as an opaque value.

The accesses binding inference sizes a pointer by are the loads inside what the executed thread
stores to global memory.  A pointer read only into shared memory, whose values come back out
through a reduction the executor does not follow element by element, left no access there, so
neither its shape nor its rows could be inferred (a gather of whole blocks by an index list:
``con[list[b] * 64 + t]``).  Its loads are in the shared-memory writes: a pointer that has no
access otherwise takes them (its role is ``in``: a read).
"""

from __future__ import annotations

from collections.abc import Callable


def shared_reads(prog, accesses: dict, loads_in: Callable) -> None:  # noqa: ANN001 - a program
    """Add to ``accesses`` the loads of the kernel's pointers inside ``prog``'s shared-memory
    writes, for the pointers that have no access yet."""
    found: dict[str, list] = {}
    for arr in prog.shared.values():
        for w in arr.writes:
            for ld, folds in loads_in(w.value, ()):
                if ld.tensor in prog.tensors and not accesses.get(ld.tensor):
                    found.setdefault(ld.tensor, []).append(
                        ("r", ld.index, w.guard, tuple(w.loops) + folds)
                    )
    accesses.update(found)
