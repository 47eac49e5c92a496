"""Atomics applied thread by thread in the SIMT interpreter's order, in the literal lowering.

``atomicMax``/``atomicMin``/``atomicAnd``/``atomicOr``/``atomicXor``/``atomicExch``/
``atomicCAS``/``atomicInc``/``atomicDec`` whose old value is used (a lock, a hash-table insert,
a claimed slot, the winner of a race), any of them at addresses read from data (a histogram of
maxima, a bit set), and float ``atomicAdd``/``atomicSub`` whose old value is used: each thread
reads the element, combines it with its operand and writes it back, one thread after another
in the interpreter's order (blocks one after another, inside a block the active threads by
linear thread id, see :mod:`cuda2nki.simt.atomicorder`), and receives the value it read.  Every
step is the operation CUDA defines, computed exactly (32-bit integer comparisons, sums and bit
operations with the exact helpers; a float sum rounds once per step, in that same order):

* max/min: the larger/smaller (signed or unsigned by the element type);
* and/or/xor: the bit operation; exch: the operand;
* CAS ``(p, cmp, v)``: ``v`` where the element equals ``cmp``, else the element;
* inc ``(p, v)``: 0 where the element is at least ``v`` (unsigned), else the element plus one;
* dec ``(p, v)``: ``v`` where the element is 0 or above ``v`` (unsigned), else minus one.

Only 32-bit elements are taken (int, unsigned, float for add/sub/max/min/exch); inactive
threads, and addresses outside the buffer, leave the element as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import DynPtr, Idx, Lin, Ptr, Tile

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

_OPS = (("atomicAdd", "add"), ("atomicSub", "sub"), ("atomicMax", "max"), ("atomicMin", "min"),
        ("atomicAnd", "and"), ("atomicOr", "or"), ("atomicXor", "xor"), ("atomicExch", "exch"),
        ("atomicCAS", "cas"), ("atomicInc", "inc"), ("atomicDec", "dec"))  # fmt: skip
#: the atomics applied thread by thread, by spelling (the scoped spellings serialise alike)
SERIAL = {f"{f}{scope}": op for f, op in _OPS for scope in ("", "_block", "_system")}
_INTS = ("int32", "uint32")
_FLOAT_OPS = frozenset({"add", "sub", "max", "min", "exch"})


def _pointee(e: A.Expr) -> A.ScalarType | None:
    t = e.ty
    if isinstance(t, A.PointerType) and isinstance(t.pointee, A.ScalarType):
        return t.pointee
    return None


def _element_problem(op: str, pointee: A.ScalarType | None) -> str | None:
    """Why elements of ``pointee`` are not updated thread by thread (None: they are)."""
    if pointee is None:
        return "a non-scalar"
    if pointee.name in _INTS or (pointee.name == "float32" and op in _FLOAT_OPS):
        return None
    return (f"{pointee.name} elements (only 32-bit integer and float elements are updated "
            "thread by thread)")  # fmt: skip


def _addresses(low: Lowerer, ptr: object, e: A.Node) -> tuple[str, str]:
    """The buffer of ``ptr`` and its per-thread flat element addresses, as an int32 tile."""
    if isinstance(ptr, DynPtr):
        return ptr.tensor, ptr.addr
    if isinstance(ptr, Ptr) and isinstance(ptr.off, Lin | Idx):
        return ptr.tensor, low.full_tile(ptr.off, "int", e)
    raise low.refuse(f"{getattr(e, 'func', 'an atomic')} on a non-pointer", e)


def serial_atomic(low: Lowerer, e: A.Call, scope: Scope) -> Tile:
    """Every thread's old value of the atomic ``e``, applied thread by thread (module doc)."""
    op = SERIAL[e.func]
    want = 3 if op == "cas" else 2
    if len(e.args) != want:
        raise low.refuse(f"{e.func} with {len(e.args)} arguments", e)
    pointee = _pointee(e.args[0])
    problem = _element_problem(op, pointee)
    if problem is not None:
        raise low.refuse(f"{e.func} on {problem}", e)
    assert pointee is not None
    ptr = low.expr(e.args[0], scope)
    ty = "float" if pointee.is_float else "int"
    if isinstance(ptr, Ptr | DynPtr) and ptr.ty != ty:
        raise low.refuse(f"{e.func} on {pointee.name} elements of a buffer of another type", e)
    vals = [low.full_tile(low.convert(low.expr(a, scope), pointee, e), ty, e) for a in e.args[1:]]
    tensor, addr = _addresses(low, ptr, e)
    cmp, value = (vals[0], vals[1]) if op == "cas" else ("None", vals[0])
    mask = low.store_mask(scope)
    known = f", known={low.exact[mask]}" if mask in low.exact else ""  # inactive ones skipped
    dst = low.fresh("old")
    low.emit("let", e.loc.line, dst=dst, value=f"_c2n_atomic_serial({tensor}, {addr}, "
             f"{value}, {cmp}, {mask}, '{op}'{known})")  # fmt: skip
    return Tile(dst, ty, unsigned=pointee.name == "uint32")
