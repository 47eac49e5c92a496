"""Window sizes are spelled folded: the linear part collected, positive terms first, and a lone
positive constant leading a difference (``1 - 65536 * t``, never ``0 - 65536 * t + 1``); the
folded size has the value of the unfolded one at every point."""

from __future__ import annotations

import itertools

import pytest

from cuda2nki.codegen.spell import size
from cuda2nki.ir.nodes import Add, Const, Max, Mul, Sub, Sym
from cuda2nki.passes._window import simple

t, n, j = Sym("t"), Sym("n"), Sym("j")

CASES = [
    (Add(Sub(Const(0), Mul(Const(65536), t)), Const(1)), "1 - 65536 * t"),
    (Add(Sub(Const(1), Mul(Const(512), t)), Sub(n, Const(3))), "n - 512 * t - 2"),
    (Sub(Sub(Const(0), Mul(Const(4), j)), Const(2)), "(-4) * j - 2"),
    (Add(Add(Const(2), Sub(Const(0), j)), Add(Const(1), Sub(j, Const(3)))), "0"),
    (Sub(Const(5), t), "5 - t"),
    (Max(Const(0), Add(Sub(Const(0), t), Const(1))), "max(0, 1 - t)"),
]


@pytest.mark.parametrize("expr, text", CASES, ids=[c[1] for c in CASES])
def test_spelled_folded(expr, text) -> None:
    assert size(simple(expr)) == text


def _value(e, env) -> int:
    return eval(size(e), {"max": max, "min": min}, env)  # noqa: S307 - our own size text


@pytest.mark.parametrize("expr, text", CASES, ids=[c[1] for c in CASES])
def test_folding_keeps_the_value(expr, text) -> None:
    del text
    for tv, nv, jv in itertools.product(range(3), (1, 700, 65537), (0, 5)):
        env = {"t": tv, "n": nv, "j": jv}
        assert _value(simple(expr), env) == _value(expr, env)
