"""A default launch for a kernel that no host code in the tree launches.

Library headers, kernels launched from Python or by a driver API the source does not show, and
kernels a tutorial defines but never runs have no ``<<<grid, block>>>`` to read.  When the
kernel's work does not depend on its block shape, any covering launch computes the same, so
one is chosen instead of leaving the kernel without a binding:

* one-dimensional kernels only (no ``.y`` / ``.z`` thread or block coordinate), with no shared
  memory (whose size and indexing assume a block shape), no warp-level exchange and no atomic
  (whose result counts every thread the launch runs);
* the block is the kernel's ``__launch_bounds__`` if it has them, else 128 threads;
* the grid covers the guard every store shares (``if (i < n)``: ``ceil_div(n, block)``
  blocks, following the sizes check chooses); a grid-stride loop or an unguarded kernel gets
  a fixed grid of 1024 threads.

Every default is said in a note naming the kernel and how to set another launch.
"""

from __future__ import annotations

import re

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

#: threads per block of a default launch without ``__launch_bounds__``
BLOCK = 128
#: threads of a default grid that no guard sizes
THREADS = 1024
#: calls whose result depends on the block's shape or the lanes of a warp, and atomics, whose
#: result counts every thread the launch runs (`atomicAdd(&hits[0], 1)`)
_SHAPED = re.compile(
    r"shfl|ballot|__any|__all|activemask|match_|reduce_|__syncwarp|tiled_partition|atomic"
)


def default_block(fn: A.Function) -> int | None:
    """The block of a default launch of ``fn``, or None when its work may depend on the block
    shape (see the module docstring)."""
    for n in walk(fn.body):
        if isinstance(n, A.Builtin) and n.dim in ("y", "z"):
            return None
        if isinstance(n, A.VarDecl) and n.storage in ("shared", "extern_shared"):
            return None
        if isinstance(n, A.Call) and _SHAPED.search(n.func):
            return None
    if fn.launch_bounds:
        return int(fn.launch_bounds[0])
    return BLOCK


def default_grid(bound: str | None, block: int) -> list[str | int]:
    """The grid of a default launch: covering the guard's bound (its text in the kernel's
    parameter names), else a fixed number of blocks."""
    if bound is not None:
        return [f"ceil_div({bound}, {block})"]
    return [max(1, THREADS // block)]
