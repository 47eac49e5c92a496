"""Blocks batched into wide tiles: a kernel whose threads never meet (no shared memory, no
barrier, no warp lanes, no atomics) and that names its thread only by its global index
(``blockIdx.x * blockDim.x + threadIdx.x``, the grid's extent as ``gridDim.x * blockDim.x``)
computes the same whatever threads share a tile.  Its literal port then runs ``128 * F``
consecutive global threads per tile, ``gid = base + F * p + f`` -- each partition a run of ``F``
consecutive threads, so an access ``x[gid]`` is one DMA of ``F`` contiguous elements per
partition -- instead of one CUDA block of (often) a single column per tile.

Before::  a (128, 1) tile per block of 128 threads, 8 blocks: 8 DMAs of 4 B per partition
After::   one (128, 8) tile of the 1024 threads: one DMA of 32 B per partition

Inside the batched tile ``threadIdx.x`` stands for the global index and ``blockIdx.x`` for 0
(they only ever appear summed as the global index); ``blockDim.x`` and ``gridDim.x`` keep their
values.  The grid is a loop over batches of the launch's threads; threads past the launch's last
one are masked off (``gid < gridDim.x * blockDim.x``).  Linear thread order in a tile is the
global order, the order the SIMT interpreter runs threads in.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A

#: the widest row of threads a batch gives each partition (int32 temporaries of 512 B)
MAX_FREE = 128
#: the row where the grid is known only when traced (it grows with the problem): a batch then
#: passes the launch's last thread by up to 128 * SIZED_FREE - 1 masked-off threads, whose
#: gathers read element 0 again and again -- a narrow row keeps a small problem's waste small
SIZED_FREE = 8
PARTITIONS = 128

_LANE_CALLS = ("__shfl", "__ballot", "__any", "__all", "__activemask", "__lanemask", "__c2n_")
_BARRIERS = ("__syncthreads", "__syncwarp", "__threadfence", "__syncthreads_")


def batch_width(tu: A.TranslationUnit, fn: A.Function, block: tuple, grid: tuple) -> int:
    """F (threads per partition of a batched tile), or 0 where blocks cannot be batched."""
    if tuple(block[1:]) != (1, 1) or any(str(g).strip() != "1" for g in grid[1:]):
        return 0
    if tu.file_shared or not _independent(tu, fn, block[0]):
        return 0
    total = _const(grid[0])
    if total is None:
        return SIZED_FREE
    # a fixed grid: its threads in as few full tiles as fit, else one masked tile's worth
    threads = total * block[0]
    per = -(-threads // PARTITIONS)
    if threads % PARTITIONS or per <= MAX_FREE:
        return min(per, MAX_FREE)
    best = max(d for d in range(1, MAX_FREE + 1) if per % d == 0)
    return best if 2 * best >= MAX_FREE else MAX_FREE  # (a narrow exact fit: masked instead)


def needs_mask(block: tuple, grid: tuple, free: int) -> bool:
    """Whether the batches can pass the launch's last thread (a grid known only when traced)."""
    total = _const(grid[0])
    return total is None or (total * block[0]) % (PARTITIONS * free) != 0


def _const(g: object) -> int | None:
    text = str(g).strip()
    return int(text) if text.isdigit() else None


def _independent(tu: A.TranslationUnit, fn: A.Function, width: int) -> bool:
    seen: set[str] = set()
    todo: list[A.Function] = [fn]
    while todo:
        f = todo.pop()
        if not _clean(f.body, tu, seen, todo, width):
            return False
    return True


def _clean(x: object, tu: A.TranslationUnit, seen: set[str], todo: list, width: int) -> bool:
    """No thread meets another in ``x`` and threads are named by their global index only
    (``width``: the block's size, which the kernel may spell as a literal)."""
    if isinstance(x, A.Binary) and (_is_gid(x, width) or _is_total(x)):
        return True
    if isinstance(x, A.Builtin):
        return x.name in ("blockDim", "gridDim") and x.dim in ("x", "")
    if isinstance(x, A.VarDecl) and x.storage in ("shared", "extern_shared"):
        return False
    if isinstance(x, A.Call):
        if x.func.startswith(_LANE_CALLS + _BARRIERS) or "atomic" in x.func:
            return False
        if x.target and x.target not in seen:
            seen.add(x.target)
            callee = tu.function(x.target)
            if callee is not None:
                todo.append(callee)
    if isinstance(x, A.Launch):
        return False
    if isinstance(x, A.Node):
        for name in x.__dataclass_fields__:
            v = getattr(x, name)
            for item in v if isinstance(v, tuple) else (v,):
                if isinstance(item, A.Node) and not _clean(item, tu, seen, todo, width):
                    return False
    return True


def _b(x: object, name: str) -> bool:
    return isinstance(x, A.Builtin) and x.name == name and x.dim in ("x", "")


def _product(x: object, a: str, b: str, width: int = 0) -> bool:
    """``a.x * b.x`` in either order (``b`` may be the literal ``width``)."""
    if not (isinstance(x, A.Binary) and x.op == "*"):
        return False

    def is_b(y: object) -> bool:
        return _b(y, b) or (width > 0 and isinstance(y, A.IntLit) and y.value == width)

    return (_b(x.left, a) and is_b(x.right)) or (is_b(x.left) and _b(x.right, a))


def _is_gid(x: A.Binary, width: int = 0) -> bool:
    """``blockIdx.x * blockDim.x + threadIdx.x`` (either order of either operation; the block
    size may be spelled as its value)."""
    if x.op != "+":
        return False
    return (_product(x.left, "blockIdx", "blockDim", width) and _b(x.right, "threadIdx")) or (
        _product(x.right, "blockIdx", "blockDim", width) and _b(x.left, "threadIdx")
    )


def _is_total(x: A.Binary) -> bool:
    return _product(x, "gridDim", "blockDim")


def masked_body(fn: A.Function) -> A.Function:
    """``fn`` with its body run only by threads of the launch (``gid < gridDim.x *
    blockDim.x``, with ``threadIdx.x`` standing for the global index in a batched tile)."""
    loc = fn.body.loc
    uint = A.ScalarType(name="uint32")
    tid = A.Builtin(name="threadIdx", dim="x", loc=loc, ty=uint)
    total = A.Binary(
        op="*",
        left=A.Builtin(name="gridDim", dim="x", loc=loc, ty=uint),
        right=A.Builtin(name="blockDim", dim="x", loc=loc, ty=uint),
        loc=loc,
        ty=uint,
    )
    cond = A.Binary(op="<", left=tid, right=total, loc=loc, ty=A.ScalarType(name="bool"))
    guarded = A.If(cond=cond, then=fn.body, loc=loc)
    return dataclasses.replace(fn, body=A.Block(body=(guarded,), loc=loc))


#: helpers of a literal program whose work depends on data (addresses read from data, loops
#: whose trip count does): threads masked off past the launch's end would still pay for them
_DATA_HELPERS = ("_c2n_gather", "_c2n_scatter", "_c2n_atomic", "_c2n_lanes_left")


def data_addressed(body: object) -> bool:
    """Whether a lowered program (nodes of :mod:`.program`) uses a data-dependent helper."""
    if isinstance(body, (list, tuple)):
        return any(data_addressed(n) for n in body)
    for name in ("operands", "cond", "header", "body", "then", "else_"):
        v = getattr(body, name, None)
        if name == "operands" and v is not None:
            if any(h in str(val) for _, val in v for h in _DATA_HELPERS):
                return True
        elif isinstance(v, str):
            if any(h in v for h in _DATA_HELPERS):
                return True
        elif isinstance(v, (list, tuple)) and data_addressed(v):
            return True
    return False
