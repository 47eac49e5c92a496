"""``dead-stores``: drop a statement whose every write a later statement overwrites unread.

CUDA kernels often store an intermediate into the output and fix it up in place (``y[j] = e;``
then ``y[j] /= sum;``); the lifter resolves the fix-up to a value computed from the inputs, so the
first store is never read.  Generating it would cost a full pass of DMAs and engine work.

Before::  y[i, j] = exp(x[i, j] - m[i]) for i < R, j < C
          y[l, n] = exp(x[l, n] - m[l]) / s[l] for l < R, n < C
After::   y[l, n] = exp(x[l, n] - m[l]) / s[l] for l < R, n < C

A statement is dead when a later one writes the same tensor over the whole of it (identity
indices, no guard, no accumulation) and nothing from it up to that later one reads the tensor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import Compute, Kernel
from cuda2nki.passes._analysis import covers_target, reads
from cuda2nki.passes.base import Pass, PassContext


@dataclass(frozen=True)
class DeadStoresPass(Pass):
    name: ClassVar[str] = "dead-stores"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        body = list(kernel.body)
        keep = [not _dead(body, p, kernel) for p in range(len(body))]
        return kernel.replace(body=tuple(s for s, k in zip(body, keep) if k))


def _dead(body: list, p: int, kernel: Kernel) -> bool:
    s = body[p]
    if not isinstance(s, Compute) or s.accumulate is not None:
        return False
    tensor = s.target.tensor
    for later in body[p + 1 :]:
        if not isinstance(later, Compute):
            return False
        if any(r.tensor == tensor for r in _all_reads(later)):
            return False
        if (
            later.target.tensor == tensor
            and later.accumulate is None
            and covers_target(later, kernel)
        ):
            return True
    return False


def _all_reads(c: Compute) -> list:
    out = list(reads(c.expr))
    if c.domain.guard is not None:
        out += reads(c.domain.guard)
    return out
