"""``split-sums``: a sum of products summed over an axis is a sum of contractions.

Symmetric rank-2k updates and other fused GEMMs add two products per step
(``C[i][j] += alpha * A[i][k] * B[j][k] + alpha * B[i][k] * A[j][k]``).  As written the reduced
body is a sum, not a product of two matrices, so no matmul layout claims it.  Summation is
linear: the reduction of a sum is the sum of the reductions of its terms, and each term is then
a contraction of its own (``factor-scales`` moves ``alpha`` out of each afterwards).

Before::  c[i, j] = c[i, j] * beta + reduce(add, k < K: alpha * a[i, k] * b[j, k]
                                                      + alpha * b[i, k] * a[j, k])
After::   c[i, j] = c[i, j] * beta + (reduce(add, k < K: alpha * a[i, k] * b[j, k])
                                      + reduce(add, k < K: alpha * b[i, k] * a[j, k]))

Only ``add`` reductions without a mask split, and only when every term multiplies two reads
that move along the reduced axis (a row sum ``x[i, k] + y[i, k]`` stays one reduction: two would
read the row twice for nothing).  Each part keeps the accumulator dtype; the terms are summed in
a different order than the CUDA loop did, which changes the result by rounding only (each
part accumulates in fp32, as the loop did).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import Binary, Expr, Kernel, Read, Reduce
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import strip_cast, transform
from cuda2nki.passes.base import Pass, PassContext, map_computes


@dataclass(frozen=True)
class SplitSumsPass(Pass):
    name: ClassVar[str] = "split-sums"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        return map_computes(kernel, split_sums)


def split_sums(e: Expr) -> Any:
    """``e`` with every sum-of-products reduction split into a sum of reductions."""
    return transform(e, lambda x: _split(x) if isinstance(x, Reduce) else x)


def _split(r: Reduce) -> Expr:
    if r.op != Op.ADD or r.where is not None or len(r.axes) != 1:
        return r
    terms = _terms(r.body, 1)
    if len(terms) < 2:
        return r
    k = r.axes[0].name
    if not all(_moving_product(t, k) for t, _ in terms):
        return r
    out: Expr | None = None
    for body, sign in terms:
        part = r.replace(body=body)
        if out is None:
            out = part if sign > 0 else None
            if out is None:
                return r  # a leading negated term: keep the loop's form
            continue
        out = Binary(Op.ADD if sign > 0 else Op.SUB, out, part, loc=r.loc)
    return out if out is not None else r


def _terms(e: Expr, sign: int) -> list[tuple[Expr, int]]:
    """The terms of a tree of additions and subtractions, each with its sign, left to right."""
    if isinstance(e, Binary) and e.op in (Op.ADD, Op.SUB):
        right = sign if e.op == Op.ADD else -sign
        return _terms(e.a, sign) + _terms(e.b, right)
    return [(e, sign)]


def _factors(e: Expr) -> list[Expr]:
    e = strip_cast(e)
    if isinstance(e, Binary) and e.op == Op.MUL:
        return _factors(e.a) + _factors(e.b)
    return [e]


def _moving_product(t: Expr, k: str) -> bool:
    """``t`` multiplies (at least) two reads whose indices move along ``k``."""
    moving = [
        f for f in _factors(t) if isinstance(f, Read) and any(k in ix.free_syms() for ix in f.index)
    ]
    return len(moving) >= 2
