"""``tile-sizes``: choose tile sizes within the hardware limits (annotates ``p_tile``/``f_tile``).

Before::  y[i, j] = exp(x[i, j]) for i < R, j < C       attrs layout=rows
After::   same, attrs p_tile=128, f_tile=4096            (rows of 128 partitions, 4096-wide chunks)

Limits: at most 128 partitions; matmul tiles are K=128 (partitions) x M=128 (stationary free) x
N=512 (moving free = one 2 KiB fp32 PSUM bank); a transpose block is 128x128.  Row groups that
reduce along the free axis keep the whole row on chip (``f_tile=0`` means "whole row").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import Binary, Compute, FloorDiv, IndexValue, Kernel, Mod, Read
from cuda2nki.ir.ops import Op, is_float
from cuda2nki.passes._analysis import attrs, reductions, walk, with_attrs
from cuda2nki.passes.base import Pass, PassContext

PMAX = 128
LEGACY_EXACT_INT_FREE = 512  # legacy row chunks of integer arithmetic with the exact helpers
PSUM_BANK_FP32 = 512
STATIONARY_FMAX = 128


@dataclass(frozen=True)
class TileSizesPass(Pass):
    name: ClassVar[str] = "tile-sizes"
    partitions: int = PMAX
    free: int = 4096
    moving: int = PSUM_BANK_FP32

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        p = max(1, min(self.partitions, PMAX))
        moving = max(1, min(self.moving, PSUM_BANK_FP32))
        body = []
        for s in kernel.body:
            if isinstance(s, Compute):
                s = self._annotate(s, p, moving, self._free(s, kernel, ctx))
            body.append(s)
        return kernel.replace(body=tuple(body))

    def _free(self, c: Compute, kernel: Kernel, ctx: PassContext) -> int:
        """The free size of a row chunk.  The legacy API allocates every tile at that full width
        (masking the rest), and integer arithmetic that needs the exact 32-bit helpers (``/``,
        ``%`` of an int tensor or of a position) keeps some twenty such tiles live: narrower
        chunks there, or the live tiles outgrow SBUF."""
        if ctx.target != "legacy":
            return self.free
        ints = {t.name for t in kernel.tensors.values() if not is_float(t.dtype)}
        found = list(walk(c.expr))
        integer = any(isinstance(x, IndexValue) for x in found) or any(
            isinstance(x, Read) and x.tensor in ints for x in found
        )
        divides = any(
            (isinstance(x, Binary) and x.op in (Op.DIV, Op.MOD, Op.SHR))
            or (isinstance(x, IndexValue) and _divides(x.expr))
            for x in found
        )
        return min(self.free, LEGACY_EXACT_INT_FREE) if integer and divides else self.free

    def _annotate(self, c: Compute, p: int, moving: int, free: int) -> Compute:
        layout = attrs(c).get("layout", "")
        if layout == "matmul":
            return with_attrs(
                c, p_tile=str(p), m_tile=str(min(p, STATIONARY_FMAX)), n_tile=str(moving)
            )
        if layout == "transpose":
            return with_attrs(c, p_tile=str(p), f_tile=str(p))
        if layout == "reduce-all":
            return with_attrs(c, p_tile=str(p), f_tile=str(max(1, free)))
        if layout == "colreduce":
            return with_attrs(c, p_tile=str(p), n_tile=str(moving))
        if layout == "rows":
            whole_row = bool(reductions(c.expr)) or "1" in (
                attrs(c).get("scan"),
                attrs(c).get("whole_row"),
            )
            return with_attrs(c, p_tile=str(p), f_tile="0" if whole_row else str(max(1, free)))
        return c


def _divides(e: object) -> bool:
    """A size expression with a quotient or remainder in it."""
    if isinstance(e, Mod | FloorDiv):
        return True
    return any(_divides(getattr(e, k)) for k in ("a", "b") if hasattr(e, k))
