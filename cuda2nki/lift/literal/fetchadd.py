"""``atomicAdd``/``atomicSub`` whose old value is used, in the literal lowering.

A slot counter (``int pos = atomicAdd(&count, 1); out[pos] = v;``), a queue push or a base
offset (``atomicAdd(&n, k)``) gives each thread the value the element held just before its own
update.  The port reproduces one legal CUDA execution, the one the SIMT interpreter runs (see
:mod:`cuda2nki.simt.atomicorder`): blocks one after another, and inside a block every execution
of the atomic serialises its active threads by linear thread id.  A thread's old value is then
the element's value plus the exclusive prefix sum, in that order, of the increments of the
active threads at the same element before it (inactive threads add 0), modulo 2**32; the
element ends with the total.

* Addresses known at trace time (a counter shared by the block, ``&c[0]``, ``c``, a
  ``__shared__`` counter; affine or index addresses): per distinct element, the prefix sums are
  Hillis-Steele steps through a scratch buffer of twice the block's threads (``_c2n_running``),
  added with the exact 32-bit helpers; a block whose threads all have their own element reads,
  adds and writes back once.
* Addresses read from data (a histogram with slots): thread by thread in thread order, one
  element read and written back per thread (``_c2n_atomic_fetch_dyn``).

Only 32-bit integer counters take this path; a float running total (which rounds in the order
of the additions) and the other atomics whose old value is used go thread by thread
(:mod:`.serialatomic`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.program import Instr
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import DynPtr, Idx, Lin, Ptr, Tile, Uni, is_int

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

#: the atomics whose old value the literal lowering computes, with the sign of the update
RUNNING = {
    f"{f}{scope}": sign
    for f, sign in (("atomicAdd", 1), ("atomicSub", -1))
    for scope in ("", "_block", "_system")
}
_COUNTERS = ("int32", "uint32")
_SCRATCH = "_run_i32"
_SMALL = 2**24 // 1024


def _pointee(e: A.Expr) -> A.ScalarType | None:
    t = e.ty
    if isinstance(t, A.PointerType) and isinstance(t.pointee, A.ScalarType):
        return t.pointee
    return None


def _scratch(low: Lowerer) -> str:
    """The scratch buffer of the prefix sums: twice the block's threads, int32."""
    if _SCRATCH not in low.names:
        low.names.add(_SCRATCH)
        size = str(2 * low.block_dims[0] * low.block_dims[1] * low.block_dims[2])
        low.scratch.append(
            Instr("scratch", (("dst", _SCRATCH), ("size", size), ("dtype", "nl.int32")))
        )
    return _SCRATCH


def _known(off: Lin | Idx) -> str:
    """The element addresses of ``off`` as a trace-time value (an int or a (P, F) array)."""
    if isinstance(off, Idx):
        return off.expr
    if off.uniform:
        return off.b
    return f"_c2n_grid({off.b}, {off.p}, {off.f})"


def _small(step: object) -> bool:
    """Is the increment a literal small enough that the prefix sums of a block's threads (at
    most 1024 of them) stay below 2**24, exact in the engines' fp32 arithmetic?"""
    return isinstance(step, Uni) and is_int(step.expr) and abs(int(step.expr)) <= _SMALL


def counts(e: A.Call) -> bool:
    """Whether ``e`` updates a 32-bit integer counter (the others go thread by thread,
    :mod:`.serialatomic`)."""
    pointee = _pointee(e.args[0]) if e.args else None
    return pointee is not None and pointee.name in _COUNTERS


def fetch_add(low: Lowerer, e: A.Call, scope: Scope) -> Tile:
    """Each thread's old value of ``atomicAdd``/``atomicSub`` ``e`` (see the module doc)."""
    if len(e.args) != 2:
        raise low.refuse(f"{e.func} with {len(e.args)} arguments", e)
    pointee = _pointee(e.args[0])
    if pointee is None or pointee.name not in _COUNTERS:
        what = pointee.name if pointee is not None else "a non-scalar"
        raise low.refuse(
            f"{e.func} on {what} whose old value is used (only 32-bit integer counters are "
            "ported: a float running total rounds in the order of the additions)",
            e,
        )
    ptr = low.expr(e.args[0], scope)
    step = low.convert(low.expr(e.args[1], scope), pointee, e)
    value = low.full_tile(step, "int", e)
    mask, sign = low.store_mask(scope), RUNNING[e.func]
    if isinstance(ptr, DynPtr) and ptr.addr in low.known_addr:
        ptr = Ptr(ptr.tensor, Idx(low.known_addr[ptr.addr]), ptr.ty)  # type: ignore[arg-type]
    if isinstance(ptr, DynPtr):
        call = f"_c2n_atomic_fetch_dyn({ptr.tensor}, {ptr.addr}, {value}, {mask}, {sign})"
    elif isinstance(ptr, Ptr) and isinstance(ptr.off, Lin | Idx):
        call = (
            f"_c2n_atomic_fetch({ptr.tensor}, {_known(ptr.off)}, {value}, {mask}, {sign}, "
            f"{_scratch(low)}{', small=True' if _small(step) else ''})"
        )
    else:
        raise low.refuse(f"{e.func} on a non-pointer", e)
    dst = low.fresh("old")
    low.emit("let", e.loc.line, dst=dst, value=call)
    return Tile(dst, "int", unsigned=pointee.name == "uint32")
