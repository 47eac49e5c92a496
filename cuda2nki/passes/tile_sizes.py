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

from cuda2nki.ir.nodes import Compute, Kernel
from cuda2nki.passes._analysis import attrs, reductions, with_attrs
from cuda2nki.passes.base import Pass, PassContext

PMAX = 128
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
                s = self._annotate(s, p, moving)
            body.append(s)
        return kernel.replace(body=tuple(body))

    def _annotate(self, c: Compute, p: int, moving: int) -> Compute:
        layout = attrs(c).get("layout", "")
        if layout == "matmul":
            return with_attrs(
                c, p_tile=str(p), m_tile=str(min(p, STATIONARY_FMAX)), n_tile=str(moving)
            )
        if layout == "transpose":
            return with_attrs(c, p_tile=str(p), f_tile=str(p))
        if layout == "reduce-all":
            return with_attrs(c, p_tile=str(p), f_tile=str(max(1, self.free)))
        if layout == "colreduce":
            return with_attrs(c, p_tile=str(p), n_tile=str(moving))
        if layout == "rows":
            whole_row = bool(reductions(c.expr)) or "1" in (
                attrs(c).get("scan"),
                attrs(c).get("whole_row"),
            )
            return with_attrs(c, p_tile=str(p), f_tile="0" if whole_row else str(max(1, self.free)))
        return c
