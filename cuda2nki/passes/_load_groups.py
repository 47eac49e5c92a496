"""Walk a block (and its loops) grouping the loads that may share one DMA, and merge each group:
the frame of the load-merging passes (``interleaved-loads``, ``halo-loads``), which differ only in
what makes loads one group and how a group becomes one DMA."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cuda2nki.ir.nodes import Alloc, Kernel, Load, Loop, Slice, View
from cuda2nki.ir.ops import Role
from cuda2nki.passes._analysis import transform
from cuda2nki.passes.common_tiles import _write_counts
from cuda2nki.rewrite import nodes

#: a load's group key (None: not mergeable), given the block's allocations by tile name
Key = Callable[[Any, dict[str, Alloc]], Any]
#: a group's mergeable form (None: leave it), given its loads and the block's allocations
Group = Callable[[list[Load], dict[str, Alloc]], Any]
#: the block's statements with one group merged
Merge = Callable[[list, Any], list]


def merge_grouped_loads(body: tuple, key: Key, group: Group, merge: Merge) -> tuple:
    """``body`` with, in every block (innermost loops first), each group of loads merged."""
    out = [
        s.replace(body=merge_grouped_loads(s.body, key, group, merge)) if isinstance(s, Loop) else s
        for s in body
    ]
    allocs = {s.name: s for s in out if isinstance(s, Alloc)}
    groups: dict[Any, list[Load]] = {}
    for s in out:
        k = key(s, allocs)
        if k is not None:
            groups.setdefault(k, []).append(s)
    for loads in groups.values():
        found = group(loads, allocs)
        if found is not None:
            out = merge(out, found)
    return tuple(out)


def merge_kernel_loads(
    kernel: Kernel, block: Callable, rewrite: Callable, entry: bool = False
) -> Kernel:
    """Run a load-merging pass over ``kernel``: ``block(body, writes, inputs, used, moved)``
    merges the groups of each block, recording each replaced tile in ``moved``; then
    ``rewrite(node, moved)`` points every read of a replaced tile at its merged tile.  Tiles some
    view reads other than as [rows, column slice] are never merged.  ``inputs`` are the ``in``
    tensors, and with ``entry`` the ``inout`` ones too (their loads read the kernel-entry
    value: the port stores to a separate output)."""
    roles = (Role.IN, Role.INOUT) if entry else (Role.IN,)
    inputs = {t.name for t in kernel.params if getattr(t, "role", None) in roles}
    odd = {
        v.tensor
        for v in nodes(kernel.body)
        if isinstance(v, View) and (len(v.dims) != 2 or not isinstance(v.dims[1], Slice))
    }
    used = {x.name for x in nodes(kernel.body) if isinstance(x, Alloc)} | set(kernel.tensors)
    moved: dict = {}
    writes = {t: n for t, n in _write_counts(kernel.body).items() if t not in odd}
    body = block(kernel.body, writes, inputs, used, moved)
    if not moved:
        return kernel
    return kernel.replace(body=transform(body, lambda x: rewrite(x, moved)))
