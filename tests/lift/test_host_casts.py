"""Scalars written as functional casts in host code: ``T(2.0)`` in a launcher templated over
the element type, ``float(0.5)``, ``static_cast<double>(x)``, a typedef's cast.  Each is the
value cast, not a call of a function the file does not define (which takes a default)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
template <typename E>
__global__ void axpby(E* out, const E* x, int len, E scale, E shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) out[i] = scale * x[i] + shift * out[i];
}
"""

SPELLINGS = {
    "template-parameter": """
template <typename real>
void launch(real* o, const real* x, int len) {
    const real a = real(2.0);
    const real b = real(0.5);
    axpby<<<(len + 255) / 256, 256>>>(o, x, len, a, b);
}
void go(float* o, const float* x) { launch<float>(o, x, 1000); }
""",
    "builtin-types": """
void go(float* o, const float* x, int len) {
    float a = float(2);
    float b = double(0.5);
    axpby<float><<<(len + 127) / 128, 128>>>(o, x, len, a, b);
}
""",
    "named-casts-and-typedef": """
typedef float value_t;
void go(float* o, const float* x, int len) {
    value_t a = static_cast<value_t>(2.0);
    value_t b = value_t(1) / static_cast<float>(2);
    axpby<float><<<(len + 63) / 64, 64>>>(o, x, len, a, b);
}
""",
}


@pytest.mark.parametrize("host", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_a_functional_cast_is_the_value_cast(host: str) -> None:
    partial, diags = infer_binding(parse_source(KERNEL + host, "k.cu"), "axpby")
    params = partial["params"]
    assert params["scale"] == 2.0 and params["shift"] == 0.5, params
    notes = " ".join(d.message for d in diags)
    assert "computed at run time" not in notes


def test_an_integer_cast_truncates() -> None:
    host = """
void go(float* o, const float* x, int len) {
    int blocks = int(len / 64.0 + 0.99);
    axpby<float><<<blocks, 64>>>(o, x, len, float(int(3.7)), 0.25f);
}
"""
    partial, _ = infer_binding(parse_source(KERNEL + host, "k.cu"), "axpby")
    assert partial["params"]["scale"] == 3.0
