"""The whole grid as a cooperative group (``cg::grid_group grid = cg::this_grid();``).

Like the block and tile groups (see :mod:`cuda2nki.frontend.ast`), a grid group is erased: it is
no variable, and its operations lower to builtins and one intrinsic:

- ``grid.sync()`` / ``cg::sync(grid)`` -> ``Call("__c2n_grid_sync")``: a barrier over every thread
  of the grid.  It is only legal under a cooperative launch (``cudaLaunchCooperativeKernel``),
  where all blocks are resident at once; the SIMT interpreter runs such a kernel's whole grid as
  one chunk, so every statement before the barrier completes in every block first.
- ``grid.block_rank()`` -> linear block id ``(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x +
  blockIdx.x``; ``grid.num_blocks()`` -> ``gridDim.x * gridDim.y * gridDim.z``;
- ``grid.thread_rank()`` -> ``block_rank * block size + block thread rank``;
  ``grid.size()`` / ``grid.num_threads()`` -> ``num_blocks * block size`` (``uint32``: CUDA's are
  64-bit, the same values below 2**32 threads);
- ``grid.is_valid()`` -> ``true``;
- ``grid.block_index().x`` -> ``blockIdx.x``, ``grid.dim_blocks().y`` -> ``gridDim.y``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.typesys import BOOL, UINT, VOID

if TYPE_CHECKING:
    from cuda2nki.frontend.coop import CoopLowering

GRID_SYNC = "__c2n_grid_sync"
#: ``grid.<method>().<x|y|z>``: the builtin each method's dim3 is
GRID_DIM3 = {"block_index": "blockIdx", "dim_blocks": "gridDim"}


def _b(loc: SourceLoc, name: str, d: str) -> A.Expr:
    return N.Builtin(loc=loc, name=name, dim=d, ty=UINT)


def _mul(loc: SourceLoc, a: A.Expr, b: A.Expr) -> A.Expr:
    return N.Binary(loc=loc, op="*", left=a, right=b, ty=UINT)


def _add(loc: SourceLoc, a: A.Expr, b: A.Expr) -> A.Expr:
    return N.Binary(loc=loc, op="+", left=a, right=b, ty=UINT)


def block_rank(loc: SourceLoc) -> A.Expr:
    zy = _add(
        loc, _mul(loc, _b(loc, "blockIdx", "z"), _b(loc, "gridDim", "y")), _b(loc, "blockIdx", "y")
    )
    return _add(loc, _mul(loc, zy, _b(loc, "gridDim", "x")), _b(loc, "blockIdx", "x"))


def num_blocks(loc: SourceLoc) -> A.Expr:
    xy = _mul(loc, _b(loc, "gridDim", "x"), _b(loc, "gridDim", "y"))
    return _mul(loc, xy, _b(loc, "gridDim", "z"))


def grid_method(low: CoopLowering, loc: SourceLoc, method: str, node: ts.Node) -> A.Expr:
    """The expression ``grid.<method>()`` lowers to; C2N1029 for a method we do not know."""
    if method == "sync":
        return N.Call(loc=loc, func=GRID_SYNC, args=(), ty=VOID)
    if method == "thread_rank":
        return _add(loc, _mul(loc, block_rank(loc), low._block_size(loc)), low._linear_tid(loc))
    if method in ("size", "num_threads"):
        return _mul(loc, num_blocks(loc), low._block_size(loc))
    if method == "num_blocks":
        return num_blocks(loc)
    if method == "block_rank":
        return block_rank(loc)
    if method == "is_valid":
        return N.BoolLit(loc=loc, value=True, ty=BOOL)
    raise low.fail("C2N1029", node, what=f"grid.{method}()")
