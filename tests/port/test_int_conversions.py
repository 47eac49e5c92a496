"""C's conversions to integer types in every port: a float truncates toward zero (the engines'
conversion rounds to nearest), a possibly negative index converted to ``unsigned`` wraps, and a
value converted to a type narrower than 32 bits wraps modulo 2**bits -- or the kernel is refused;
never a port that computes something else."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.codegen.pipeline import port_file
from tests.port.acceptance import port_variant

_BIND = {
    "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
    "params": {
        "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "y": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "n": 1000,
    },
    "check": {"shapes": [{"n": 131}, {"n": 7}]},
}


def _kernel(body: str) -> str:
    return (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) y[i] = {body};\n"
        "}\n"
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
    _, run, points = port_variant(
        f"conv/{name}", _kernel(body), _BIND, target, tmp_path, literal_ok=True
    )
    assert len(points) >= 3 and not run.mismatches, run.mismatches


WRAPS = [
    ("uchar_of_negative_index", "(float)(unsigned char)(i - 500)"),
    ("schar_of_large_index", "(float)(signed char)(i * 3)"),
    ("short_of_large_index", "(float)(short)(i * 100)"),
    ("uchar_of_float_to_int", "(float)(unsigned char)(int)(x[i] * 100.0f)"),
    ("gather_at_a_uchar_index", "x[(unsigned char)(i + 100) % n]"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), WRAPS, ids=[w[0] for w in WRAPS])
def test_narrowing_that_may_wrap_is_ported_exactly_or_refused(name, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(_kernel(body))
    res = port_file(cu, binding=binding_from_dict({"kernel": "k", **_BIND}), target=target)
    if res.source is None:
        assert any(d.code in ("C2N2301", "C2N2501") for d in res.diagnostics)
        return
    _, run, _ = port_variant(name, _kernel(body), _BIND, target, tmp_path, literal_ok=True)
    assert not run.mismatches, run.mismatches
