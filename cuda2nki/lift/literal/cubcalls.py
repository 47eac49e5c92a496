"""CUB's block and warp reductions in the literal lowering (the front end's
``__c2n_cub_block_reduce_<op>(v, valid, threads)``, ``__c2n_cub_block_total_<op>(v, threads)``
and ``__c2n_cub_warp_reduce_<op>(v, valid, lanes)``; see :mod:`cuda2nki.frontend.cubblock`).

The values combine in the order the SIMT interpreter gives CUB's default algorithm, so that a
port computes the same floating-point result: in each segment of 32 lanes (``lanes`` for a
warp reduction) a shuffle-down tree with offsets 1, 2, 4... (a lane past the segment adds the
identity), then, for a block, the segments' first lanes one after the other.  Values move
through the block's exchange buffer, as shuffles do.  Only threads that are active and among the
first ``valid`` contribute.  CUB defines the result in thread 0 (lane 0 of each logical warp);
the port gives the block's result to every thread, one of the values CUB allows.

Refused: scans and other collectives, a block that is not whole warps, and a block whose size is
not the CUB type's thread count (CUB's storage assumes it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.values import Lin, Tile, Uni, Value, as_lin, is_int, lin_add

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer
    from cuda2nki.lift.literal.state import Scope

PREFIX = "__c2n_cub_"
_KINDS = ("block_reduce_", "block_total_", "warp_reduce_")
_OPS = {"add": "add", "max": "maximum", "min": "minimum"}
_INT32 = A.ScalarType(name="int32")


def cub_collective(low: Lowerer, e: A.Call, scope: Scope) -> Value:
    """The value of one CUB reduction call (see the module's docstring)."""
    rest = e.func.removeprefix(PREFIX)
    kind = next((k for k in _KINDS if rest.startswith(k)), None)
    op = rest.removeprefix(kind or "")
    if kind is None or op not in _OPS:
        raise low.refuse(f"the CUB collective '{e.func}' (only block and warp reductions)", e)
    nargs = 2 if kind == "block_total_" else 3
    if len(e.args) != nargs:
        raise low.refuse(f"{e.func} with {len(e.args)} arguments", e)
    threads = _constant(low, e.args[-1], scope, e)
    block = low.block_dims[0] * low.block_dims[1] * low.block_dims[2]
    if kind != "warp_reduce_" and threads != block:
        raise low.refuse(f"a CUB block collective for {threads} threads in blocks of {block}", e)
    width = threads if kind == "warp_reduce_" else 32
    if width > 32 or width & (width - 1) or block % width:
        raise low.refuse(f"a CUB reduction over segments of {width} lanes in blocks of {block}", e)
    v = low.expr(e.args[0], scope)
    ty = "float" if _float(e.ty) else "int"
    tid = low.linear_tid()
    ok = low.store_mask(scope)
    if nargs == 3:
        valid = low.expr(e.args[1], scope)
        if isinstance(valid, Tile):
            raise low.refuse(f"{e.func} with a per-thread count of valid items", e)
        seg = tid if kind != "warp_reduce_" else low.arith("%", tid, Uni(str(width), "int"),
                                                          _INT32, e)  # fmt: skip
        counted = low.cond_tile(low.arith("<", seg, valid, None, e), e)
        ok = low.mask_and(None if ok == "None" else ok, counted) or "None"
    ident = _identity(op, ty)
    cur = _select(low, ok, low.full_tile(v, ty, e), ident, ty, e)
    cur = _tree(low, cur, op, ty, width, e)
    if kind == "warp_reduce_":
        return Tile(cur, ty)
    scr = low.exchange(ty)
    low.emit("store", e.loc.line, tensor=scr, base=tid.b, cp=tid.p, cf=tid.f, value=cur,
             mask="None")  # fmt: skip
    acc = low.lane_read(scr, Lin("0", "0", "0"), ty, e.loc.line)
    for w in range(1, block // 32):
        other = low.lane_read(scr, Lin(str(32 * w), "0", "0"), ty, e.loc.line)
        acc = low.op(_OPS[op], [acc, other], ty).expr
    return Tile(acc, ty)


def _tree(low: Lowerer, cur: str, op: str, ty: str, width: int, e: A.Call) -> str:
    """Each lane combined with the lanes after it in its segment, offsets 1, 2, 4..."""
    tid = low.linear_tid()
    lane = low.arith("%", tid, Uni(str(width), "int"), _INT32, e)
    scr = low.exchange(ty)
    off = 1
    while off < width:
        low.emit("store", e.loc.line, tensor=scr, base=tid.b, cp=tid.p, cf=tid.f, value=cur,
                 mask="None")  # fmt: skip
        got = low.lane_read(scr, lin_add(tid, as_lin(Uni(str(off), "int"))), ty, e.loc.line)
        inside = low.arith("<", low.arith("+", lane, Uni(str(off), "int"), None, e),
                           Uni(str(width), "int"), None, e)  # fmt: skip
        got = _select(low, low.cond_tile(inside, e), got, _identity(op, ty), ty, e)
        cur = low.op(_OPS[op], [cur, got], ty).expr
        off *= 2
    return cur


def _select(low: Lowerer, mask: str, a: str, ident: str, ty: str, e: A.Call) -> str:
    if mask == "None":
        return a
    other = low.full_tile(Uni(ident, ty), ty, e)
    dst = low.fresh("s")
    low.emit("where", e.loc.line, dst=dst, mask=mask, a=a, b=other, dtype=low.dt(ty))
    return dst


def _identity(op: str, ty: str) -> str:
    if op == "add":
        return "0"
    if ty == "float":
        return "-np.inf" if op == "max" else "np.inf"
    return "-2147483648" if op == "max" else "2147483647"


def _constant(low: Lowerer, a: A.Expr, scope: Scope, e: A.Call) -> int:
    v = low.expr(a, scope)
    if not (isinstance(v, Uni) and is_int(v.expr)):
        raise low.refuse(f"{e.func} for a thread count that is not a constant", e)
    return int(v.expr)


def _float(t: object) -> bool:
    return isinstance(t, A.ScalarType) and t.is_float
