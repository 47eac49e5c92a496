"""``factor-scales``: a scalar factor of every term of a sum is a factor of the sum.

PolyBench-style GEMMs scale inside the product (``C[i][j] += alpha * A[i][k] * B[k][j]``), so
the lifted contraction multiplies each term by ``alpha``; as written it is not a product of two
matrices and cannot go to the tensor engine.  A factor that is the same for every term (a
scalar parameter, a literal, a read that does not move with the reduced axes) moves out of the
sum: one multiply per result instead of one per term, and the body left is the bare product.

Before::  c[i, j] = c[i, j] * beta + reduce(add, k < K: alpha * a[i, k] * b[k, j])
After::   c[i, j] = c[i, j] * beta + alpha * reduce(add, k < K: a[i, k] * b[k, j])

Only sums move factors (``max``/``min`` of scaled terms would need the factor's sign), and
only through multiplications: a cast between the factor and the sum stays where it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import Binary, Expr, IndexValue, Kernel, Lit, Param, Reduce
from cuda2nki.ir.ops import Op
from cuda2nki.ir.types import TypeEnv
from cuda2nki.passes._analysis import transform, walk
from cuda2nki.passes.base import Pass, PassContext, map_computes


@dataclass(frozen=True)
class FactorScalesPass(Pass):
    name: ClassVar[str] = "factor-scales"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        env = TypeEnv(kernel)
        return map_computes(kernel, lambda e: factor_scales(e, env))


def factor_scales(e: Expr, env: TypeEnv) -> Any:
    """``e`` with the invariant factors of every sum moved in front of it (bottom-up)."""
    return transform(e, lambda x: _hoist(x, env) if isinstance(x, Reduce) else x)


def _hoist(r: Reduce, env: TypeEnv) -> Expr:
    if r.op != Op.ADD:
        return r
    axes = {a.name for a in r.axes}
    factors = _factors(r.body)
    if len(factors) < 2:
        return r
    keep = [f for f in factors if not _invariant(f, axes)]
    out = [f for f in factors if _invariant(f, axes)]
    if not out or not keep:
        return r
    body = _product(keep, r.body)
    if not _same_dtype(body, r.body, env):
        # the scale widened the terms (``alpha * a * b`` with bf16 a, b multiplies in fp32):
        # without it the products would round to the narrow type
        return r
    return _product([*out, r.replace(body=body)], r)


def _same_dtype(a: Expr, b: Expr, env: TypeEnv) -> bool:
    try:
        return env.dtype_of(a) == env.dtype_of(b)
    except (TypeError, ValueError):
        return False


def _factors(e: Expr) -> list[Expr]:
    """The operands of a tree of multiplications, left to right."""
    if isinstance(e, Binary) and e.op == Op.MUL:
        return _factors(e.a) + _factors(e.b)
    return [e]


def _product(fs: list[Expr], like: Expr) -> Expr:
    out = fs[0]
    for f in fs[1:]:
        out = Binary(Op.MUL, out, f, loc=getattr(like, "loc", out.loc))
    return out


def _invariant(e: Expr, axes: set[str]) -> bool:
    """``e`` is built from scalar parameters, literals and indices that do not move with
    ``axes`` (reads stay inside: a per-row factor is the other layouts' business)."""
    for x in walk(e):
        if isinstance(x, Param | Lit):
            continue
        if isinstance(x, IndexValue):
            if x.expr.free_syms() & axes:
                return False
            continue
        if isinstance(x, Binary) and x.op in (Op.MUL, Op.ADD, Op.SUB, Op.DIV):
            continue
        return False
    return True
