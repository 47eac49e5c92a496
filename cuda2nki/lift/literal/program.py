"""The literal program: what the generic SIMT-vectorised lowering produces.

A tree of small frozen nodes that the code generator (:mod:`cuda2nki.codegen.literal`) spells with
one template macro per instruction kind.  Operands are Python expressions evaluated when the NKI
kernel is traced (block indices, loop counters and scalar sizes are plain Python integers there),
so the program keeps CUDA's structure: a loop over the launch grid, one tile per per-thread value.

Instruction kinds and their operands (all strings):

``let`` dst value            trace-time assignment
``op`` dst op args dtype     elementwise ``nl.<op>`` over (P, F) tiles and scalars
``where`` dst mask a b dtype select
``iota`` dst base cp cf dtype  the affine per-thread integer ``base + cp*p + cf*f`` as a tile
``full`` dst value dtype     a constant tile
``tiles`` dst count dtype    a Python list of tiles (a per-thread local array)
``load`` dst tensor base cp cf dtype   strided DMA view ``tensor.flat[base + cp*p + cf*f]``
``store`` tensor base cp cf value mask [known]  guarded strided store (mask ``None``: every
                             thread; ``known``: the mask as a trace-time array, when exact)
``scratch`` dst size dtype   an HBM buffer standing for a ``__shared__`` array
``output`` dst shape dtype   an output tensor; ``fill`` dst src initialises it
``comment`` text; ``ret`` value; ``brk``; ``call`` expr
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Instr:
    kind: str
    operands: tuple[tuple[str, str], ...]
    line: int = 0

    def get(self, key: str) -> str:
        return dict(self.operands)[key]


@dataclass(frozen=True)
class Branch:
    """A trace-time ``if`` (its condition is uniform over the block)."""

    cond: str
    then: tuple[Node, ...]
    else_: tuple[Node, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class Loop:
    """A trace-time loop: ``kind`` is ``for`` (header = ``var in range(...)``), ``while``
    (header = condition) or ``def`` (header = the signature of the per-block function)."""

    kind: str
    header: str
    body: tuple[Node, ...]
    line: int = 0


Node = Instr | Branch | Loop


@dataclass(frozen=True)
class LiteralProgram:
    name: str
    params: tuple[str, ...]
    partitions: int
    free: int
    layout: str
    body: tuple[Node, ...]
    notes: tuple[str, ...] = field(default=())
    #: threads of the grid per tile where blocks are batched (0: one CUDA block per tile)
    batched: int = 0
