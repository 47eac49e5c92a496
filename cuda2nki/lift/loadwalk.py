"""The loads of a symbolically executed value, with the folds (reductions) around each."""

from __future__ import annotations

from cuda2nki.lift import affine as af


def loads_in(e, folds: tuple):  # noqa: ANN001, ANN201 - a value node, a generator
    """Loads of a value with the folds around them (as loop contexts: variable and trips).

    A value is a DAG (a shuffle ladder or an online recurrence reads each step's value several
    times): each node is visited once per fold context, so the walk is linear in its size."""
    from cuda2nki.lift import values as V
    from cuda2nki.lift.symexec import LoopCtx

    seen: set[tuple[int, int]] = set()
    stack = [(e, folds)]
    keep = []  # the nodes visited, alive until the walk ends (their ids stay unique)
    while stack:
        x, fs = stack.pop()
        key = (id(x), id(fs))
        if key in seen:
            continue
        seen.add(key)
        keep.append((x, fs))
        if isinstance(x, V.Load):
            yield x, fs
            continue
        if isinstance(x, V.Fold):
            fs = fs + (LoopCtx(x.var, x.stop, af.TRUE),)
            keep.append((x, fs))
        stack.extend((k, fs) for k in reversed(list(V.children(x))))
