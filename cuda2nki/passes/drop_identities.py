"""``drop-identities``: an elementwise op with an identity operand is its other operand.

CUDA spells running values from their neutral start (``float acc = 0.0f; acc += ...``,
``float m = -INFINITY; m = fmaxf(m, ...)``) and scales by literal ones; lifted as written, each
becomes an engine instruction that returns its input unchanged.

Before::  y[i] = 0.0 + 2.0 * x[i];   m[i] = max(-inf, reduce(max, k < C: x[i, k]))
After::   y[i] = 2.0 * x[i];         m[i] = reduce(max, k < C: x[i, k])

An operand is dropped only where the result keeps the other side's dtype (``0.0 + n`` with an
integer ``n`` is a conversion, kept).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import Binary, Expr, Kernel, Lit
from cuda2nki.ir.types import TypeEnv
from cuda2nki.passes._analysis import transform
from cuda2nki.passes._identity import is_identity
from cuda2nki.passes.base import Pass, PassContext, map_computes


@dataclass(frozen=True)
class DropIdentitiesPass(Pass):
    name: ClassVar[str] = "drop-identities"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        env = TypeEnv(kernel)
        return map_computes(kernel, lambda e: drop(e, env))


def drop(e: Expr, env: TypeEnv) -> Any:
    """``e`` with every identity operation replaced by its other operand (bottom-up)."""
    return transform(e, lambda x: _other(x, env) if isinstance(x, Binary) else x)


def _other(e: Binary, env: TypeEnv) -> Expr:
    for keep, unit, on_left in ((e.a, e.b, False), (e.b, e.a, True)):
        if not isinstance(unit, Lit) or not is_identity(e.op, unit.value, on_left):
            continue
        try:
            same = env.dtype_of(keep) == env.dtype_of(e)
        except (TypeError, ValueError):
            same = False
        if same:
            return keep
    return e
