"""Addresses formed from indices only, kept known at trace time (literal lowering).

A pointer moved by index arithmetic that is not affine in the thread (``out + b * T * C`` with
``b = idx / T``) becomes a tile of flat addresses, like one moved by data: its reads are
gathers.  A store through it needs no scatter, though: the addresses depend on indices only, so
the lowering also takes a trace-time snapshot of them (a NumPy array computed when the kernel is
traced, ``_kaN``) and stores with strided views split at trace time, as for any index address.
Snapshots no store uses are dropped from the program (:func:`drop_unused`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from cuda2nki.lift.literal.program import Branch, Instr, Loop, Node
from cuda2nki.lift.literal.values import Idx, Lin, Tile, Uni, Value, mul

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

#: the literal lowering's refusal of a store whose addresses are read from data
SCATTER_REFUSAL = "a store at an address that depends on data (a scatter)"

_NAME = re.compile(r"\b_ka\d+\b")


def index_address(
    low: Lowerer, off: Lin | Idx | Tile, terms: list[tuple[Value, str]]
) -> str | None:
    """The trace-time snapshot (a name bound to a NumPy array) of ``off + sum(v * stride)``
    when every part depends on indices only, else None."""
    if isinstance(off, Tile):
        base = low.known_addr.get(off.expr)
        if base is None:
            return None
    else:
        base = low.np_spell(off)
    parts = [base]
    for v, stride in terms:
        if not isinstance(v, Uni | Lin | Idx) or (isinstance(v, Uni) and v.ty == "float"):
            return None
        parts.append(mul(low.np_spell(v), stride))
    low.snapshots += 1
    name = f"_ka{low.snapshots}"
    low.emit("let", dst=name, value=f"_c2n_np({' + '.join(parts)})")
    return name


def drop_unused(nodes: list[Node]) -> list[Node]:
    """``nodes`` without the snapshots that no other instruction reads (a fixed point: a
    snapshot read only by a dropped one goes too)."""
    while True:
        used: set[str] = set()
        for n in _instrs(nodes):
            skip = dict(n.operands).get("dst") if n.kind == "let" else None
            for k, v in n.operands:
                if not (k == "dst" and v == skip):
                    used.update(_NAME.findall(v))
        out = _keep(nodes, used)
        if _count(out) == _count(nodes):
            return out
        nodes = out


def _is_snapshot(n: Node) -> bool:
    return (
        isinstance(n, Instr)
        and n.kind == "let"
        and bool(_NAME.fullmatch(dict(n.operands).get("dst", "")))
    )


def _keep(nodes: Iterable[Node], used: set[str]) -> list[Node]:
    out: list[Node] = []
    for n in nodes:
        if isinstance(n, Branch):
            out.append(Branch(n.cond, tuple(_keep(n.then, used)), tuple(_keep(n.else_, used)),
                              n.line))  # fmt: skip
        elif isinstance(n, Loop):
            out.append(Loop(n.kind, n.header, tuple(_keep(n.body, used)), n.line))
        elif not _is_snapshot(n) or dict(n.operands)["dst"] in used:
            out.append(n)
    return out


def _instrs(nodes: Iterable[Node]) -> Iterable[Instr]:
    for n in nodes:
        if isinstance(n, Branch):
            yield from _instrs(n.then)
            yield from _instrs(n.else_)
        elif isinstance(n, Loop):
            yield from _instrs(n.body)
        else:
            yield n


def _count(nodes: Iterable[Node]) -> int:
    return sum(1 for _ in _instrs(nodes))
