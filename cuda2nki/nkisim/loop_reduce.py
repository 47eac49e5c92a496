"""Legacy ``nl.loop_reduce(x, op, loop_indices, dtype=, mask=)``: reduce ``x`` into the
destination across the iterations of a loop.

The destination is the assignment's target and is also ``op``'s right-hand input
(reference: "the destination tile is also the rhs input to op"), so each call is
``dst = op(x, dst)``, a ``tensor_tensor`` on the vector engine.  The simulator runs loops one
iteration after another, so the reduction is that instruction, issued where the call is; the
``loop_indices`` only tell the compiler which loops it spans.  Two spellings name the
destination:

* ``dst[...] = nl.loop_reduce(...)``: the call returns a :class:`LoopReduction` that the
  subscript assignment applies to the view it writes;
* ``b = nl.loop_reduce(...)``: the destination is the tile ``b`` holds before the assignment,
  read from the calling frame (the name the call's result is stored to).

Any other use of the call's result names no destination: refused (C2N3001).
"""

from __future__ import annotations

import dis
import functools
import sys
import types
from dataclasses import dataclass

from cuda2nki.nkisim.errors import invalid, unsupported

API = "nl.loop_reduce"
_NAME_STORES = {"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"}


@dataclass(frozen=True)
class LoopReduction:
    """A reduction waiting for the view ``dst[...] = nl.loop_reduce(...)`` writes."""

    x: object
    op: object
    dtype: object
    mask: object

    def into(self, dst):
        """The value to write into ``dst``: ``op(x, dst)`` (one vector instruction)."""
        from cuda2nki.nkisim import legacy_isa

        return legacy_isa.tensor_tensor(
            self.x, dst, self.op, dtype=self.dtype or dst.dtype, mask=self.mask
        )


#: what may run between the call and the store of its result: evaluating a subscript target
_TARGET_OPS = {
    "LOAD_FAST",
    "LOAD_CONST",
    "LOAD_NAME",
    "LOAD_GLOBAL",
    "LOAD_DEREF",
    "LOAD_ATTR",
    "BUILD_SLICE",
    "BUILD_TUPLE",
    "BINARY_OP",
    "BINARY_SUBSCR",
    "UNARY_NEGATIVE",
    "NOP",
    "EXTENDED_ARG",
}


def _store_after_call(frame: types.FrameType) -> tuple[str, str] | None:
    """``(opname, name)`` of the store that takes the result of the call ``frame`` is in;
    ``None`` where the result goes anywhere else first (an argument, an operand)."""
    return _store_after(frame.f_code, frame.f_lasti)


@functools.lru_cache(maxsize=4096)
def _store_after(code: types.CodeType, lasti: int) -> tuple[str, str] | None:
    """``_store_after_call`` for the call at ``lasti`` of ``code``: the same for every
    iteration of a loop, so the bytecode of a (large) kernel is decoded once per call site."""
    for ins in dis.get_instructions(code):
        if ins.offset <= lasti:
            continue
        if ins.opname == "STORE_SUBSCR" or ins.opname in _NAME_STORES:
            return ins.opname, ins.argval
        if ins.opname not in _TARGET_OPS:
            return None
    return None


def loop_reduce(x, op, loop_indices, dtype=None, *, mask=None, frame_depth: int = 1):
    """``dst = op(x, dst)`` for the destination the call's result is assigned to."""
    if not isinstance(loop_indices, (list, tuple)):
        raise invalid(API, "loop_indices must be a list or tuple of loop variables")
    red = LoopReduction(x, op, dtype, mask)
    frame = sys._getframe(frame_depth + 1)
    store = _store_after_call(frame)
    if store is not None and store[0] == "STORE_SUBSCR":
        return red
    if store is not None and store[0] in _NAME_STORES:
        name = store[1]
        ns = frame.f_locals if store[0] in ("STORE_FAST", "STORE_DEREF", "STORE_NAME") else {}
        dst = ns.get(name, frame.f_globals.get(name))
        from cuda2nki.nkisim.tensor import NkiTensor

        if isinstance(dst, NkiTensor):
            return red.into(dst)
        raise invalid(API, f"the destination '{name}' must hold a tile before the reduction")
    raise unsupported(
        API,
        "only as 'dst[...] = nl.loop_reduce(...)' or 'b = nl.loop_reduce(...)' (the destination)",
    )
