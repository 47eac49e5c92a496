"""Local arrays of 64-bit integers in the literal lowering, as lists of limb pairs.

A thread's ``long long r[K]`` (``uint64_t``, ``long``, ``size_t``...) in a kernel whose 64-bit
locals are limb pairs (see :mod:`.wide`) is a Python list of K pairs ``(low, high)`` of int32
tiles, every element starting at zero.  An element at a uniform index is read and written by
name (a write under a per-thread condition selects limb by limb); an index that differs between
threads selects, for every element ``k``, the threads whose index is ``k``, as
:mod:`.lanearray` does for 32-bit elements (an index outside the array, undefined in C, reads
element 0 and writes nothing).  Values stored are converted to the element type first, so they
wrap modulo 2**64 exactly as C's conversions do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.lanearray import MAX_ELEMENTS
from cuda2nki.lift.literal.state import Binding_, Scope
from cuda2nki.lift.literal.values import Local, Tile, Value
from cuda2nki.lift.literal.wide import UWIDE, WIDE, wide_class

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer


def declare_wide_array(
    low: Lowerer, s: A.VarDecl, scope: Scope, dims: list[int], elem: A.ScalarType
) -> None:
    """``elem name[dims] (= {...})``: a list of zero pairs, then the initialisers in order."""
    klass = wide_class(elem) or WIDE
    count = _count(dims)
    name = low.pyname(s.name)
    low.emit("let", s.loc.line, dst=name, value=f"[_c2n_wide(0) for _ in range({count})]")
    arr = Local(name, tuple(int(d) for d in dims), klass)
    low.env[-1][s.name] = Binding_(arr, "A", scope.depth, klass)
    if isinstance(s.init, A.InitList):
        for k, item in enumerate(s.init.items[:count]):
            v = low.convert(low.expr(item, scope), elem, item)
            low.emit("let", dst=f"{name}[{k}]", value=_pair(low, v, klass, item))


def read_wide_element(low: Lowerer, arr: Local, idx: str | Tile) -> Tile:
    """Every thread's element ``arr[idx]``: by name at a uniform flat index, else a select
    over the elements."""
    unsigned = arr.ty == UWIDE
    if not isinstance(idx, Tile):
        return Tile(f"{arr.expr}[{idx}]", WIDE, unsigned=unsigned)
    out = low.fresh("pk")
    low.emit("let", dst=out, value=f"{arr.expr}[0]")
    for k in range(1, _count(arr.dims)):
        hit = low.op("equal", [idx.expr, str(k)], "float").expr
        low.emit("let", dst=out, value=f"_c2n_wwhere({hit}, {arr.expr}[{k}], {out})")
    return Tile(out, WIDE, unsigned=unsigned)


def write_wide_element(
    low: Lowerer, arr: Local, idx: str | Tile, v: Value, elem: object, scope: Scope, node: A.Node
) -> None:
    """``arr[idx] = v`` for the active threads (``v`` converted to the element type)."""
    new = _pair(low, low.convert(v, elem, node), arr.ty, node)
    held = low.fresh("w")  # evaluated once, whatever the number of elements it may land in
    low.emit("let", dst=held, value=new)
    if not isinstance(idx, Tile):
        cur = f"{arr.expr}[{idx}]"
        value = held if scope.mask is None else f"_c2n_wwhere({scope.mask}, {held}, {cur})"
        low.emit("let", node.loc.line, dst=cur, value=value)
        return
    if _count(arr.dims) > MAX_ELEMENTS:
        raise low.refuse(
            f"a local array of {_count(arr.dims)} elements indexed by a per-thread value (at "
            f"most {MAX_ELEMENTS} are selected thread by thread)",
            node,
        )
    for k in range(_count(arr.dims)):
        hit = low.op("equal", [idx.expr, str(k)], "float").expr
        hit = low.mask_and(scope.mask, hit) or hit
        cur = f"{arr.expr}[{k}]"
        low.emit("let", node.loc.line, dst=cur, value=f"_c2n_wwhere({hit}, {held}, {cur})")


def _pair(low: Lowerer, v: Value, klass: str, node: A.Node) -> str:
    """``v`` (already of the element type) spelled as a pair of limb tiles."""
    return f"_c2n_wide({low.wide_operand(v, klass != UWIDE, node)})"


def _count(dims: list[int] | tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n
