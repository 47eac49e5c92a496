"""C's conversions to integer types in every port: a float truncates toward zero (the engines'
conversion rounds to nearest), a possibly negative index converted to ``unsigned`` wraps, and a
value converted to a type narrower than 32 bits wraps modulo 2**bits; never a port that
computes something else."""

from __future__ import annotations

import pytest

from tests.port.acceptance import (
    assert_ports_exactly,
    grid_binding,
    map_kernel,
    tensor_param,
)

_SHAPES = [{"n": 131}, {"n": 7}]
_BIND = grid_binding(
    ["ceil_div(n, 64)"],
    {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1000},
    _SHAPES,
    block=64,
)


PORTED = [
    ("float_to_int_truncates", "(float)(int)(x[i] * 3.7f)"),
    ("float_to_int_truncates_in_a_sum", "x[i] - (float)(int)(x[i] * 2.5f) * 0.5f"),
    ("float_to_short_truncates", "(float)(short)(x[i] * 100.0f)"),
    ("unsigned_of_negative_index_shifted", "(float)((unsigned)(i - 10) >> 28) + x[i]"),
    ("unsigned_of_negative_index_halved", "(float)((unsigned int)(3 - i) / 2u) * 1e-9f"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), PORTED, ids=[p[0] for p in PORTED])
def test_conversions_port_exactly(name, body, target, tmp_path) -> None:
    assert_ports_exactly(f"conv/{name}", map_kernel(body), _BIND, target, tmp_path, literal_ok=True)


WRAPS = [
    ("uchar_of_negative_index", "(float)(unsigned char)(i - 500)"),
    ("schar_of_large_index", "(float)(signed char)(i * 3)"),
    ("short_of_large_index", "(float)(short)(i * 100)"),
    ("uchar_of_float_to_int", "(float)(unsigned char)(int)(x[i] * 100.0f)"),
    ("gather_at_a_uchar_index", "x[(unsigned char)(i + 100) % n]"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), WRAPS, ids=[w[0] for w in WRAPS])
def test_narrowing_that_may_wrap_ports_exactly(name, body, target, tmp_path) -> None:
    assert_ports_exactly(f"wrap/{name}", map_kernel(body), _BIND, target, tmp_path, literal_ok=True)


def _int_kernel(body: str) -> str:
    return map_kernel(body, "const int* a, const float* x, int* o, int n", "o")


_INT_BIND = grid_binding(
    ["ceil_div(n, 64)"],
    {
        "a": tensor_param(["n"], "in", "int32", [-20, 20]),
        "x": tensor_param(["n"], "in"),
        "o": tensor_param(["n"], "out", "int32"),
        "n": 1000,
    },
    _SHAPES,
    block=64,
)

# a condition is an int (0 or 1) in C's integer arithmetic, whether it depends on the index only
# or on data
CONDITIONS = [
    ("index_condition_subtracted", "(x[i] > 0.5f) * 2 - (i % 3 == 0)"),
    ("index_condition_xored", "a[i] ^ (i < 7)"),
    ("index_condition_times_data", "((i & 1) == 0) * a[i] + ((i >> 2) != 3)"),
    ("data_condition_ored", "(a[i] - 1) | (a[i] > 5)"),
    ("data_condition_anded", "(a[i] < 0) & (x[i] < 0.25f)"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), CONDITIONS, ids=[c[0] for c in CONDITIONS])
def test_conditions_in_integer_arithmetic_port_exactly(name, body, target, tmp_path) -> None:
    src = _int_kernel(body)
    assert_ports_exactly(f"cond/{name}", src, _INT_BIND, target, tmp_path, literal_ok=True)
