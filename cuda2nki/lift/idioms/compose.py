"""Row compositions: softmax (max, exp, sum, divide -- naive or online), layernorm (mean,
variance, rsqrt) and rmsnorm (mean of squares, rsqrt), recognised as a sequence of reductions
and maps over one row."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import ops, reduces


def is_softmax(c: N.Compute, k: N.Kernel) -> bool:
    rs = reduces(c.expr)
    kinds = {str(r.op) for r in rs}
    return (
        "max" in kinds
        and "add" in kinds
        and "exp" in ops(c.expr)
        and ("div" in ops(c.expr) or "reciprocal" in ops(c.expr) or "log" in ops(c.expr))
    )


def is_norm(c: N.Compute, k: N.Kernel) -> bool:
    rs = reduces(c.expr)
    if not rs or not any(str(r.op) == "add" for r in rs):
        return False
    o = ops(c.expr)
    return bool({"rsqrt", "sqrt"} & o) and bool(c.domain.axes)
