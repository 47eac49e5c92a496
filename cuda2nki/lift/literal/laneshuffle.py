"""Warp shuffles whose source lane or offset differs between threads, in the literal lowering.

``__shfl_sync(m, v, who)`` with ``who`` read from a ballot (``__ffs(bal) - 1``), a lane computed
per thread (``(lane + k) % 32``), or ``__shfl_down_sync(m, v, d)`` with a per-thread ``d``: every
thread writes its value at its linear thread id in the block's exchange buffer, as for a uniform
lane, then reads its source element with a gather at a per-thread address.

The source follows the SIMT interpreter's rule, in lanes of the warp (``L = tid % 32``, the
thread's segment of ``w`` lanes starting at ``S = L - L % w``):

* ``__shfl_sync``: lane ``S + (x mod w)`` (the lane modulo the width, CUDA's rule);
* ``__shfl_up_sync``: lane ``L - x`` where it is at least ``S``, else the thread's own value;
* ``__shfl_down_sync``: lane ``L + x`` where it is below ``S + w``, else the thread's own value;
* ``__shfl_xor_sync``: lane ``L ^ x`` where it is below ``S + w``, else the thread's own value;

and a source past the block's last thread (a partial last warp) gives the thread's own value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.helpers import _kind
from cuda2nki.lift.literal.values import Tile, Uni, Value

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

_INT = A.ScalarType(name="int32")


def _int_node(e: A.Node) -> A.Expr:
    """A signed 32-bit operand standing for the lane arithmetic (C's int rules)."""
    return A.IntLit(loc=e.loc, value=0, ty=_INT)


def _source_lane(low: Lowerer, f: str, lane: Value, seg: Value, x: Value, w: int, e: A.Node):
    """The source lane (in lanes of the warp) of every thread and the condition under which it
    is taken (None: always)."""
    node = _int_node(e)
    uw = Uni(str(w), "int")
    if f in ("__shfl_sync", "__shfl"):
        return low.arith("+", seg, low.arith("&", x, Uni(str(w - 1), "int"), _INT, node),
                         _INT, node), None  # fmt: skip
    if f in ("__shfl_up_sync", "__shfl_up"):
        src = low.arith("-", lane, x, _INT, node)
        return src, low.arith(">=", src, seg, _INT, node)
    if f in ("__shfl_down_sync", "__shfl_down"):
        src = low.arith("+", lane, x, _INT, node)
    else:  # xor
        src = low.arith("^", lane, x, _INT, node)
    return src, low.arith("<", src, low.arith("+", seg, uw, _INT, node), _INT, node)


def lane_shuffle(low: Lowerer, f: str, v: Value, x: Value, w: int, e: A.Node) -> Tile:
    """Every thread's value of the shuffle ``f`` of ``v`` from the per-thread lane or offset
    ``x`` within segments of ``w`` lanes (see the module doc)."""
    ty = "float" if _kind(v) == "float" else "int"
    vt = low.full_tile(v, ty, e)
    tid = low.linear_tid()
    scr = low.exchange(ty)
    line = e.loc.line
    low.emit("store", line, tensor=scr, base=tid.b, cp=tid.p, cf=tid.f, value=vt, mask="None")
    node = _int_node(e)
    lane = low.arith("%", tid, Uni("32", "int"), _INT, node)
    seg = low.arith("-", lane, low.arith("%", lane, Uni(str(w), "int"), _INT, node), _INT, node)
    src, ok = _source_lane(low, f, lane, seg, x, w, e)
    base = low.arith("-", tid, lane, _INT, node)  # the warp's first thread
    own = low.tile(tid, "int", e)
    addr = low.tile(low.arith("+", base, src, _INT, node), "int", e)
    if ok is not None:
        addr = _select(low, low.cond_tile(ok, e), addr, own, line)
    threads = low.block_dims[0] * low.block_dims[1] * low.block_dims[2]
    if threads % 32:
        there = low.cond_tile(low.arith("<", Tile(addr, "int"), Uni(str(threads), "int"),
                                        _INT, node), e)  # fmt: skip
        addr = _select(low, there, addr, own, line)
    dst = low.fresh("ld")
    low.emit("let", line, dst=dst, value=f"_c2n_gather({scr}, {addr}, None, {low.dt(ty)})")
    return Tile(dst, ty)


def _select(low: Lowerer, mask: str, a: str, b: str, line: int) -> str:
    name = low.fresh("s")
    low.emit("where", line, dst=name, mask=mask, a=a, b=b, dtype="nl.int32")
    return name
