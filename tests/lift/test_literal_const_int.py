"""Literal ports print integer arithmetic on literals as its value (the dynamic shared size
``64 * sizeof(float)`` becomes ``64``), and nothing else is folded."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuda2nki.lift.literal.values import const_int


@pytest.mark.parametrize(
    ("expr", "value"),
    [("64 * 4", 256), ("(256 + 1) // 2", 128), ("-3 * 2", -6), ("7", 7), ("10 - 4 * 2", 2)],
)
def test_literal_arithmetic_folds(expr: str, value: int) -> None:
    assert const_int(expr) == value


@pytest.mark.parametrize("expr", ["n * 4", "1.5 * 2", "4 // 0", "2 ** 3", "f(2)", "", "4 *"])
def test_anything_else_is_left_as_written(expr: str) -> None:
    assert const_int(expr) is None


@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.sampled_from(["+", "-", "*", "//"]))
def test_folding_agrees_with_python(a: int, b: int, op: str) -> None:
    expr = f"({a}) {op} ({b})"
    expected = None if op == "//" and b == 0 else eval(expr)  # noqa: S307 - literals only
    assert const_int(expr) == expected
